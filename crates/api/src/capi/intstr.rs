//! Int-or-percent arithmetic (`maxSurge: 1`, `maxUnavailable: "25%"`, `maxUnhealthy: "40%"`).
//!
//! An integer stands for itself. A string must be `"<int>%"` and is scaled against a total,
//! rounding up or down as asked. Anything else is an error, as in Kubernetes'
//! `GetScaledValueFromIntOrPercent`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Why an int-or-percent value could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IntOrPercentError {
    #[error("invalid type: string is not a percentage")]
    NotAPercentage,
    #[error("invalid value for IntOrString: invalid value {0:?}")]
    InvalidPercentage(String),
}

/// Parses `"N%"` into `N`.
pub fn parse_percent(s: &str) -> Result<i64, IntOrPercentError> {
    let digits = s.strip_suffix('%').ok_or(IntOrPercentError::NotAPercentage)?;
    digits.parse::<i64>().map_err(|_| IntOrPercentError::InvalidPercentage(s.to_string()))
}

/// The value of `v` against `total`: integers as they are, percentages scaled and rounded up
/// (`round_up`) or down.
pub fn scaled_value(v: &IntOrString, total: i32, round_up: bool) -> Result<i32, IntOrPercentError> {
    match v {
        IntOrString::Int(i) => Ok(*i),
        IntOrString::String(s) => {
            let percent = parse_percent(s)?;
            let product = percent * i64::from(total);
            let scaled = if round_up { -(-product).div_euclid(100) } else { product.div_euclid(100) };
            i32::try_from(scaled).map_err(|_| IntOrPercentError::InvalidPercentage(s.clone()))
        }
    }
}

/// Scaled value of an optional field, with a default for when it is unset.
pub fn scaled_value_or(
    v: Option<&IntOrString>,
    default: IntOrString,
    total: i32,
    round_up: bool,
) -> Result<i32, IntOrPercentError> {
    scaled_value(v.unwrap_or(&default), total, round_up)
}

/// Renders the value as users write it (`1` or `"25%"`), for messages.
pub fn display(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Validates an optional int-or-percent field at `path`: an integer or `"N%"`, not negative.
pub fn validate_field(
    v: Option<&IntOrString>,
    path: &crate::admission::FieldPath,
) -> Option<crate::admission::FieldError> {
    let v = v?;
    let value = serde_json::to_value(v).unwrap_or_default();
    match scaled_value(v, 100, true) {
        Err(e) => Some(crate::admission::FieldError::invalid(
            path.as_str(),
            value,
            format!("must be either an int or a percentage: {e}"),
        )),
        Ok(n) if n < 0 => {
            Some(crate::admission::FieldError::invalid(path.as_str(), value, "must be greater than or equal to 0"))
        }
        Ok(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> IntOrString {
        IntOrString::String(v.to_string())
    }

    #[test]
    fn scales_like_kubernetes() {
        let cases = [
            (IntOrString::Int(3), 10, true, Ok(3)),
            (s("25%"), 10, true, Ok(3)),
            (s("25%"), 10, false, Ok(2)),
            (s("0%"), 1, true, Ok(0)),
            (s("100%"), 7, false, Ok(7)),
            (s("40%"), 3, false, Ok(1)),
            (s("40%"), 3, true, Ok(2)),
            (s("-10%"), 15, false, Ok(-2)),
            (s("-10%"), 15, true, Ok(-1)),
            (s("10"), 10, true, Err(IntOrPercentError::NotAPercentage)),
            (s("abc%"), 10, true, Err(IntOrPercentError::InvalidPercentage("abc%".into()))),
            (s("%"), 10, true, Err(IntOrPercentError::InvalidPercentage("%".into()))),
        ];
        for (v, total, up, want) in cases {
            assert_eq!(scaled_value(&v, total, up), want, "{v:?} of {total} up={up}");
        }
    }

    #[test]
    fn field_validation() {
        let p = crate::admission::FieldPath::new("spec").child("maxSurge");
        assert!(validate_field(None, &p).is_none());
        assert!(validate_field(Some(&IntOrString::Int(0)), &p).is_none());
        assert!(validate_field(Some(&s("25%")), &p).is_none());
        assert!(validate_field(Some(&s("25")), &p).is_some());
        assert!(validate_field(Some(&IntOrString::Int(-1)), &p).is_some());
        assert!(validate_field(Some(&s("-5%")), &p).is_some());
    }

    #[test]
    fn defaults_and_display() {
        assert_eq!(scaled_value_or(None, IntOrString::Int(1), 5, true), Ok(1));
        assert_eq!(scaled_value_or(Some(&s("50%")), IntOrString::Int(1), 5, true), Ok(3));
        assert_eq!(display(&s("40%")), "40%");
        assert_eq!(display(&IntOrString::Int(2)), "2");
    }
}
