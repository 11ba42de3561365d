//! The string `format`s kube-apiserver checks on custom resources; formats it does not know
//! (and the numeric ones: int32, int64, float, double) pass.

use std::net::IpAddr;
use std::sync::LazyLock;

use base64::Engine;
use regex::Regex;

/// The patterns below are constants, covered by the tests.
fn re(src: &str) -> Regex {
    #[allow(clippy::expect_used)]
    Regex::new(src).expect("constant pattern")
}

static UUID: LazyLock<Regex> =
    LazyLock::new(|| re("(?i)^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$"));
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*[+-]?(?:\d+(?:\.\d+)?\s*(?:ns|us|µs|ms|s|m|h|d|w|sec|secs|second|seconds|min|mins|minute|minutes|hr|hrs|hour|hours|day|days|wk|wks|week|weeks)\s*)+$",
    )
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| re(r"^[^@\s]+@[^@\s]+\.[^@\s]+$"));
static MAC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^([0-9a-f]{2}[:-]){7}[0-9a-f]{2}$|^([0-9a-f]{4}\.){2}[0-9a-f]{4}$")
});
static HEX_COLOR: LazyLock<Regex> = LazyLock::new(|| re(r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| re(r"^rgb\(\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*,\s*\d{1,3}%?\s*\)$"));
static BSON_ID: LazyLock<Regex> = LazyLock::new(|| re(r"^[0-9a-fA-F]{24}$"));
static URI_SCHEME: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$"));

/// Whether `s` is a valid value of `format`.
pub fn valid(format: &str, s: &str) -> bool {
    match format {
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "date" => s.parse::<jiff::civil::Date>().is_ok() && s.len() == 10,
        "date-time" | "datetime" => s.parse::<jiff::Timestamp>().is_ok(),
        "duration" => s == "0" || DURATION.is_match(s),
        "uuid" => UUID.is_match(s),
        "uuid3" => uuid_version(s, '3'),
        "uuid4" => uuid_version(s, '4'),
        "uuid5" => uuid_version(s, '5'),
        "email" => EMAIL.is_match(s),
        "hostname" => hostname(s),
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => cidr(s),
        "mac" => MAC.is_match(s),
        "hexcolor" => HEX_COLOR.is_match(s),
        "rgbcolor" => RGB_COLOR.is_match(s),
        "bsonobjectid" => BSON_ID.is_match(s),
        "uri" => s.starts_with('/') || URI_SCHEME.is_match(s),
        _ => true,
    }
}

fn uuid_version(s: &str, v: char) -> bool {
    UUID.captures(s).and_then(|c| c.get(1)).is_some_and(|m| m.as_str().starts_with(v))
}

/// An RFC 1123 host name.
fn hostname(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// `address/prefix` with a prefix that fits the address family.
pub fn cidr(s: &str) -> bool {
    let Some((addr, prefix)) = s.split_once('/') else { return false };
    let Ok(addr) = addr.parse::<IpAddr>() else { return false };
    let Ok(prefix) = prefix.parse::<u8>() else { return false };
    prefix <= if addr.is_ipv4() { 32 } else { 128 }
}

#[cfg(test)]
mod tests {
    use super::valid;

    #[test]
    fn checks_the_formats_kube_apiserver_checks() {
        for (f, ok, bad) in [
            ("date-time", "2024-01-02T03:04:05Z", "yesterday"),
            ("date", "2024-01-02", "2024-13-02"),
            ("duration", "1h30m", "soon"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
            ("uuid4", "123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
            ("byte", "aGVsbG8=", "not base64!"),
            ("email", "a@example.com", "a@b"),
            ("hostname", "node-1.example.com", "-bad-"),
            ("ipv4", "10.0.0.1", "10.0.0"),
            ("ipv6", "fd00::1", "fd00:::1"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "aa:bb:cc:dd:ee:ff", "aa:bb"),
            ("hexcolor", "#ff0000", "red"),
        ] {
            assert!(valid(f, ok), "{f}: {ok}");
            assert!(!valid(f, bad), "{f}: {bad}");
        }
        assert!(valid("int32", "anything"));
        assert!(valid("made-up", "anything"));
    }
}
