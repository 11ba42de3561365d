//! Test helpers for a kind's conversion: convert JSON either way through the lossless
//! layer, and check round trips.

use serde_json::Value;

use super::{HubSpoke, native};
use crate::conversion::NoRefVersions;

/// `obj` converted to the hub (v1beta2) version, through the lossless layer.
pub(crate) fn up<C: HubSpoke>(obj: &Value) -> Value {
    let to = <C::Hub as kube::Resource>::api_version(&()).into_owned();
    native::<C>().convert(obj.clone(), &to, &NoRefVersions).expect("converts up")
}

/// `obj` converted to the spoke (v1beta1) version, through the lossless layer.
pub(crate) fn down<C: HubSpoke>(obj: &Value) -> Value {
    let to = <C::Spoke as kube::Resource>::api_version(&()).into_owned();
    native::<C>().convert(obj.clone(), &to, &NoRefVersions).expect("converts down")
}

/// A spoke object comes back unchanged from the hub, and a hub object from the spoke.
pub(crate) fn assert_round_trips<C: HubSpoke>(obj: &Value) {
    let hub = <C::Hub as kube::Resource>::api_version(&()).into_owned();
    let back = if obj["apiVersion"] == hub.as_str() { up::<C>(&down::<C>(obj)) } else { down::<C>(&up::<C>(obj)) };
    assert_eq!(&back, obj, "round trip changed the object");
}

/// The typed conversion alone (no annotation): what a reader of the other version sees.
pub(crate) fn strip_conversion_data(mut obj: Value) -> Value {
    if let Some(a) = obj.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
        a.remove(super::CONVERSION_DATA);
        if a.is_empty()
            && let Some(m) = obj["metadata"].as_object_mut()
        {
            m.remove("annotations");
        }
    }
    obj
}
