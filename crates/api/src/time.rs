//! Instants as Kubernetes objects record them in text: RFC 3339, UTC, whole seconds
//! (`2026-12-06T17:29:39Z`), the layout of apimachinery's `metav1.Time`.

use jiff::Timestamp;
use jiff::tz::Offset;

/// `t` in the layout objects record instants in (fractions of a second dropped).
/// Written field by field: a strftime pattern would be parsed again on every call, and
/// the API server and controllers stamp instants on most writes.
pub fn rfc3339(t: Timestamp) -> String {
    let d = Offset::UTC.to_datetime(t);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", d.year(), d.month(), d.day(), d.hour(), d.minute(), d.second())
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
        // The layout Kubernetes and strftime's `%Y-%m-%dT%H:%M:%SZ` agree on, over years.
        for secs in [0, 951_782_400, 1_709_164_799, 4_102_444_800, 253_402_207_200] {
            let t = Timestamp::from_second(secs).expect("in range");
            assert_eq!(rfc3339(t), t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(), "{secs}");
        }
    }
}
