//! Address pool entries: single IPs (`10.0.0.1`), inclusive ranges (`10.0.0.10-10.0.0.20`)
//! and CIDRs (`10.0.0.0/24`), as contiguous inclusive ranges of one family.

use std::net::IpAddr;

use ipnet::IpNet;

/// An inclusive range of addresses of one family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpRange {
    /// First address.
    pub start: IpAddr,
    /// Last address (inclusive).
    pub end: IpAddr,
}

/// Why an entry is not an IP, a range or a CIDR.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    #[error("{0:?} is not a valid IP, range, nor CIDR")]
    Unparsable(String),
    #[error("range {0:?} mixes IP families")]
    MixedFamilies(String),
    #[error("range {0:?} ends before it starts")]
    Reversed(String),
}

/// An address as a number, for ordering within a family.
pub fn ip_to_u128(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

impl IpRange {
    /// Parses an entry in any of the three forms.
    pub fn parse(s: &str) -> Result<Self, RangeError> {
        let bad = || RangeError::Unparsable(s.to_string());
        if let Some((a, b)) = s.split_once('-') {
            let (start, end): (IpAddr, IpAddr) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if start.is_ipv4() != end.is_ipv4() {
                return Err(RangeError::MixedFamilies(s.to_string()));
            }
            if ip_to_u128(start) > ip_to_u128(end) {
                return Err(RangeError::Reversed(s.to_string()));
            }
            return Ok(Self { start, end });
        }
        if s.contains('/') {
            let net: IpNet = s.parse().map_err(|_| bad())?;
            return Ok(Self { start: net.network(), end: net.broadcast() });
        }
        let ip: IpAddr = s.parse().map_err(|_| bad())?;
        Ok(Self { start: ip, end: ip })
    }

    pub fn is_ipv4(&self) -> bool {
        self.start.is_ipv4()
    }

    /// True if both ranges are of one family and share an address.
    pub fn overlaps(&self, other: &IpRange) -> bool {
        self.is_ipv4() == other.is_ipv4()
            && ip_to_u128(self.start) <= ip_to_u128(other.end)
            && ip_to_u128(other.start) <= ip_to_u128(self.end)
    }

    /// True if the whole range lies in `net`.
    pub fn within(&self, net: &IpNet) -> bool {
        net.contains(&self.start) && net.contains(&self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        let r = IpRange::parse("10.0.0.10-10.0.0.20").unwrap();
        assert_eq!((r.start.to_string(), r.end.to_string()), ("10.0.0.10".into(), "10.0.0.20".into()));
        let r = IpRange::parse("10.0.1.7/24").unwrap();
        assert_eq!((r.start.to_string(), r.end.to_string()), ("10.0.1.0".into(), "10.0.1.255".into()));
        let r = IpRange::parse("fd00::1").unwrap();
        assert!(!r.is_ipv4() && r.start == r.end);
        assert_eq!(IpRange::parse("10.0.0.5-10.0.0.1"), Err(RangeError::Reversed("10.0.0.5-10.0.0.1".into())));
        assert!(matches!(IpRange::parse("10.0.0.1-fd00::1"), Err(RangeError::MixedFamilies(_))));
        for bad in ["", "10.0.0", "10.0.0.1/33", "a-b", "10.0.0.1 - 10.0.0.2"] {
            assert!(IpRange::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn overlap_and_containment() {
        let a = IpRange::parse("10.0.0.0/30").unwrap();
        assert!(a.overlaps(&IpRange::parse("10.0.0.3-10.0.0.9").unwrap()));
        assert!(!a.overlaps(&IpRange::parse("10.0.0.4").unwrap()));
        assert!(!a.overlaps(&IpRange::parse("::/0").unwrap()));
        assert!(a.within(&"10.0.0.0/24".parse().unwrap()));
        assert!(!a.within(&"10.0.0.2/31".parse().unwrap()));
    }
}
