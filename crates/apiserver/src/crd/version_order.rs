//! Kubernetes version priority: GA before beta before alpha, higher numbers first, then
//! anything else alphabetically (so `v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > foo`).

use std::cmp::Ordering;

/// (stability rank, major, minor) of a Kubernetes-style version; `None` otherwise.
fn parse(v: &str) -> Option<(u8, u64, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let major: u64 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((2, major, 0));
    }
    let (rank, num) = if let Some(n) = tail.strip_prefix("beta") {
        (1, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (0, n)
    } else {
        return None;
    };
    Some((rank, major, num.parse().ok()?))
}

fn compare(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Sorts versions, highest priority first.
pub fn sort_by_priority(versions: &mut [String]) {
    versions.sort_by(|a, b| compare(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_like_kubernetes() {
        let mut v: Vec<String> =
            ["foo", "v1alpha1", "v1", "v1beta1", "v2", "v1beta2", "v10"].iter().map(|s| s.to_string()).collect();
        sort_by_priority(&mut v);
        assert_eq!(v, ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]);
    }
}
