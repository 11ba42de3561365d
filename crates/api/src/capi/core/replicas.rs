//! Replicas defaulting shared by MachineSet, MachineDeployment and MachinePool: unset
//! replicas follow the cluster autoscaler's min/max-size annotations when both are present,
//! otherwise 1.

use std::collections::BTreeMap;

use crate::admission::{FieldError, FieldPath};
use crate::capi::keys::{AUTOSCALER_MAX_SIZE_ANNOTATION, AUTOSCALER_MIN_SIZE_ANNOTATION};

/// The stored object's replicas, on update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OldReplicas {
    /// The object is being created.
    Create,
    /// Update; the stored object has these replicas (possibly unset).
    Update(Option<i32>),
}

/// Replicas for an object whose `spec.replicas` is unset:
/// - without both autoscaler annotations: 1;
/// - on create, or when the stored value is unset: the min size;
/// - otherwise the stored value, clamped into `[min, max]`.
///
/// `min <= max` is deliberately not checked (upstream does not either).
pub(crate) fn default_replicas(
    annotations: Option<&BTreeMap<String, String>>,
    old: OldReplicas,
) -> Result<i32, FieldError> {
    let (Some(min), Some(max)) = (
        annotations.and_then(|a| a.get(AUTOSCALER_MIN_SIZE_ANNOTATION)),
        annotations.and_then(|a| a.get(AUTOSCALER_MAX_SIZE_ANNOTATION)),
    ) else {
        return Ok(1);
    };
    let parse = |key: &str, value: &str| {
        value.parse::<i32>().map_err(|e| {
            FieldError::invalid(
                FieldPath::new("metadata").child("annotations").key(key),
                value,
                format!("could not parse the value of the annotation as an int32: {e}"),
            )
        })
    };
    let min = parse(AUTOSCALER_MIN_SIZE_ANNOTATION, min)?;
    let max = parse(AUTOSCALER_MAX_SIZE_ANNOTATION, max)?;
    Ok(match old {
        OldReplicas::Create | OldReplicas::Update(None) => min,
        OldReplicas::Update(Some(old)) if old < min => min,
        OldReplicas::Update(Some(old)) if old > max => max,
        OldReplicas::Update(Some(old)) => old,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(min: &str, max: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            (AUTOSCALER_MIN_SIZE_ANNOTATION.to_string(), min.to_string()),
            (AUTOSCALER_MAX_SIZE_ANNOTATION.to_string(), max.to_string()),
        ])
    }

    #[test]
    fn follows_the_autoscaler_annotations() {
        let a = ann("3", "7");
        let cases = [
            (None, OldReplicas::Create, Ok(1)),
            (Some(&a), OldReplicas::Create, Ok(3)),
            (Some(&a), OldReplicas::Update(None), Ok(3)),
            (Some(&a), OldReplicas::Update(Some(1)), Ok(3)),
            (Some(&a), OldReplicas::Update(Some(9)), Ok(7)),
            (Some(&a), OldReplicas::Update(Some(5)), Ok(5)),
        ];
        for (annotations, old, want) in cases {
            assert_eq!(default_replicas(annotations, old), want, "{old:?}");
        }
        // Only one annotation: plain default.
        let mut one = ann("3", "7");
        one.remove(AUTOSCALER_MAX_SIZE_ANNOTATION);
        assert_eq!(default_replicas(Some(&one), OldReplicas::Create), Ok(1));
        // min > max is not rejected: the clamp applies min first.
        assert_eq!(default_replicas(Some(&ann("5", "2")), OldReplicas::Update(Some(1))), Ok(5));
    }

    #[test]
    fn unparsable_annotations_are_rejected() {
        let e = default_replicas(Some(&ann("three", "7")), OldReplicas::Create).unwrap_err();
        assert_eq!(e.field, format!("metadata.annotations[{AUTOSCALER_MIN_SIZE_ANNOTATION}]"));
        assert!(default_replicas(Some(&ann("1", "99999999999")), OldReplicas::Create).is_err());
    }
}
