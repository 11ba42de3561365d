//! Instants as Kubernetes objects record them in text: RFC 3339, UTC, whole seconds
//! (`2026-12-06T17:29:39Z`), the layout of apimachinery's `metav1.Time`.

use jiff::Timestamp;
use jiff::tz::Offset;

/// `t` in the layout objects record instants in (fractions of a second dropped).
/// Written digit by digit: a strftime pattern would be parsed again on every call, and
/// the API server and controllers stamp instants on most writes.
pub fn rfc3339(t: Timestamp) -> String {
    with_rfc3339(t, str::to_string)
}

/// `f` of `t`'s text in [`rfc3339`]'s layout, made on the stack.
fn with_rfc3339<R>(t: Timestamp, f: impl FnOnce(&str) -> R) -> R {
    let d = Offset::UTC.to_datetime(t);
    let Ok(year) = u16::try_from(d.year()) else {
        // Years before 0 (jiff's range starts at -9999) have no fixed width.
        let (y, mo, day, h, mi, sec) = (d.year(), d.month(), d.day(), d.hour(), d.minute(), d.second());
        return f(&format!("{y:04}-{mo:02}-{day:02}T{h:02}:{mi:02}:{sec:02}Z"));
    };
    let mut text = *b"0000-00-00T00:00:00Z";
    let mut put = |at: usize, width: usize, mut n: u16| {
        for digit in text[at..at + width].iter_mut().rev() {
            *digit = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year);
    for (at, n) in [(5, d.month()), (8, d.day()), (11, d.hour()), (14, d.minute()), (17, d.second())] {
        put(at, 2, n.unsigned_abs().into());
    }
    f(std::str::from_utf8(&text).unwrap_or_default())
}

/// `#[serde(serialize_with)]` helpers that write instants as k8s-openapi's `Time` does,
/// in [`rfc3339`]'s layout, without its strftime pattern: a Machine's status alone holds
/// sixteen of them, and the controllers serialize it on every write they consider.
pub mod text {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use serde::{Serialize, Serializer};

    /// A `Time` field.
    pub fn time<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
        super::with_rfc3339(t.0, |text| s.serialize_str(text))
    }

    /// An optional list of `metav1.Condition`s, member for member as k8s-openapi writes
    /// them.
    pub fn conditions<S: Serializer>(conditions: &Option<Vec<Condition>>, s: S) -> Result<S::Ok, S::Error> {
        match conditions {
            None => s.serialize_none(),
            Some(list) => s.collect_seq(list.iter().map(ConditionText)),
        }
    }

    struct ConditionText<'a>(&'a Condition);

    impl Serialize for ConditionText<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeStruct;
            let c = self.0;
            let mut out = s.serialize_struct("Condition", 5 + usize::from(c.observed_generation.is_some()))?;
            out.serialize_field("lastTransitionTime", &Instant(&c.last_transition_time))?;
            out.serialize_field("message", &c.message)?;
            if let Some(g) = &c.observed_generation {
                out.serialize_field("observedGeneration", g)?;
            }
            out.serialize_field("reason", &c.reason)?;
            out.serialize_field("status", &c.status)?;
            out.serialize_field("type", &c.type_)?;
            out.end()
        }
    }

    struct Instant<'a>(&'a Time);

    impl Serialize for Instant<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            time(self.0, s)
        }
    }
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;

    use super::rfc3339;

    #[test]
    fn instants_read_as_kubernetes_writes_them() {
        let at = |s: &str| s.parse::<Timestamp>().expect("an instant");
        assert_eq!(rfc3339(at("2026-12-06T17:29:39Z")), "2026-12-06T17:29:39Z");
        // Fractions are dropped, not rounded; offsets become UTC.
        assert_eq!(rfc3339(at("2026-12-31T23:59:59.999Z")), "2026-12-31T23:59:59Z");
        assert_eq!(rfc3339(at("2027-01-01T01:02:03+02:00")), "2026-12-31T23:02:03Z");
        assert_eq!(rfc3339(Timestamp::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // The layout Kubernetes and strftime's `%Y-%m-%dT%H:%M:%SZ` agree on, over years
        // (jiff's first and last instants included).
        for secs in [-377_705_023_201, -62_167_219_201, 0, 951_782_400, 1_709_164_799, 4_102_444_800, 253_402_207_200] {
            let t = Timestamp::from_second(secs).expect("in range");
            assert_eq!(rfc3339(t), t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(), "{secs}");
        }
    }

    #[test]
    fn conditions_serialize_as_k8s_openapi_writes_them() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
        use serde::Serialize;

        #[derive(Serialize)]
        struct Fast<'a> {
            #[serde(serialize_with = "super::text::conditions")]
            conditions: &'a Option<Vec<Condition>>,
            #[serde(serialize_with = "super::text::time")]
            at: &'a Time,
        }
        #[derive(Serialize)]
        struct Usual<'a> {
            conditions: &'a Option<Vec<Condition>>,
            at: &'a Time,
        }
        let at = Time("2026-12-06T21:16:05.5Z".parse().expect("an instant"));
        let condition = |observed_generation| Condition {
            last_transition_time: at.clone(),
            message: "waiting \"here\"".into(),
            observed_generation,
            reason: "Waiting".into(),
            status: "False".into(),
            type_: "Ready".into(),
        };
        for conditions in [None, Some(vec![]), Some(vec![condition(Some(3)), condition(None)])] {
            let fast = serde_json::to_string(&Fast { conditions: &conditions, at: &at }).expect("serializes");
            let usual = serde_json::to_string(&Usual { conditions: &conditions, at: &at }).expect("serializes");
            assert_eq!(fast, usual);
        }
    }
}
