//! `metav1.Duration` values: Go duration strings such as `10m`, `300s`, `1h30m` or `500ms`.
//! Cluster API stores them as strings; admission parses them to check bounds.

use jiff::SignedDuration;

/// Why a duration string could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("time: invalid duration {0:?}")]
pub struct DurationError(pub String);

const UNITS: &[(&str, i128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses a Go duration: an optional sign, then one or more `<number><unit>` parts with units
/// `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`; a bare `0` is also accepted.
pub fn parse(s: &str) -> Result<SignedDuration, DurationError> {
    let err = || DurationError(s.to_string());
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(SignedDuration::ZERO);
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(f) => {
                let n = f.bytes().take_while(u8::is_ascii_digit).count();
                f.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(err());
        }
        let unit_len = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let scale = UNITS.iter().find(|(u, _)| *u == unit).map(|(_, n)| *n).ok_or_else(err)?;
        let int: i128 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| err())? };
        let mut value = int.checked_mul(scale).ok_or_else(err)?;
        if !frac_part.is_empty() {
            // Keep at most 18 fractional digits; beyond that nothing changes at ns precision.
            let digits = &frac_part[..frac_part.len().min(18)];
            let frac: i128 = digits.parse().map_err(|_| err())?;
            let denom = 10i128.pow(u32::try_from(digits.len()).map_err(|_| err())?);
            value += frac * scale / denom;
        }
        total = total.checked_add(value).ok_or_else(err)?;
        if total > i128::from(i64::MAX) {
            return Err(err());
        }
        rest = after;
    }
    let nanos = i64::try_from(if negative { -total } else { total }).map_err(|_| err())?;
    Ok(SignedDuration::from_nanos(nanos))
}

/// Validates an optional duration field at `path` (the Go API rejects unparsable values).
pub fn validate_field(value: Option<&str>, path: &crate::admission::FieldPath) -> Option<crate::admission::FieldError> {
    let v = value?;
    parse(v).err().map(|e| crate::admission::FieldError::invalid(path.as_str(), v, e.to_string()))
}

/// The unparsable durations of `obj` at `paths`: dotted field paths where a segment
/// ending in `[]` walks every item of a list (`spec.initConfiguration.bootstrapTokens[].ttl`).
/// Missing fields are skipped.
pub fn invalid_at(obj: &serde_json::Value, paths: &[String]) -> Vec<crate::admission::FieldError> {
    let mut errs = Vec::new();
    for path in paths {
        let segments: Vec<&str> = path.split('.').collect();
        walk(obj, &segments, crate::admission::FieldPath::default(), &mut errs);
    }
    errs
}

fn walk(
    value: &serde_json::Value,
    segments: &[&str],
    at: crate::admission::FieldPath,
    errs: &mut Vec<crate::admission::FieldError>,
) {
    let Some((first, rest)) = segments.split_first() else {
        if let Some(e) = validate_field(value.as_str(), &at) {
            errs.push(e);
        }
        return;
    };
    match first.strip_suffix("[]") {
        Some(list) => {
            for (i, item) in value.get(list).and_then(serde_json::Value::as_array).into_iter().flatten().enumerate() {
                walk(item, rest, at.child(list).index(i), errs);
            }
        }
        None => {
            if let Some(next) = value.get(*first) {
                walk(next, rest, at.child(first), errs);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_unparsable_durations_at_paths_through_lists() {
        let obj = serde_json::json!({"spec": {
            "timeout": "5m",
            "tokens": [{"ttl": "24h"}, {"ttl": "a day"}],
            "other": {"timeout": "soon"},
        }});
        let paths =
            ["spec.timeout", "spec.tokens[].ttl", "spec.other.timeout", "spec.missing.timeout"].map(String::from);
        let errs = invalid_at(&obj, &paths);
        let at: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(at, ["spec.tokens[1].ttl", "spec.other.timeout"]);
    }

    #[test]
    fn parses_go_durations() {
        let ok = [
            ("0", 0),
            ("10m", 600_000_000_000),
            ("300s", 300_000_000_000),
            ("1h30m", 5_400_000_000_000),
            ("500ms", 500_000_000),
            ("1.5s", 1_500_000_000),
            (".5s", 500_000_000),
            ("-1m", -60_000_000_000),
            ("2us", 2_000),
            ("2µs", 2_000),
            ("1h0m0s", 3_600_000_000_000),
        ];
        for (s, nanos) in ok {
            assert_eq!(parse(s).unwrap(), SignedDuration::from_nanos(nanos), "{s}");
        }
        for bad in ["", "10", "1x", "m", "1.s.", "-", "1h 2m", "99999999999999999999h"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
