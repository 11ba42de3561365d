//! Which addresses a pool hands out, and which one it hands out next: pure functions over
//! inclusive ranges of addresses as numbers, so a /64 costs no more than a /30.
//!
//! The allocatable set is every `addresses` entry merged, minus `excludedAddresses`, minus
//! (unless `allocateReservedIPAddresses`) the first address of the subnet the first address
//! and `prefix` make and, for IPv4, its last one, minus the gateway. Allocation is first
//! fit: the lowest allocatable address not in use.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use drydock_api::capi::ipam::{IPAddressStatusSummary, InClusterIPPoolSpec, IpRange, RangeError, ip_to_u128};

/// An inclusive range of addresses of one family, as numbers.
type Span = (u128, u128);

/// Why a pool spec gives no allocatable set (admission rejects all of these; a pool stored
/// before its rules existed may still carry one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("spec.addresses is empty")]
    NoAddresses,
    #[error("spec.{field}: {source}")]
    Entry { field: &'static str, source: RangeError },
    #[error("spec.{field} is not all of the family of the first address")]
    MixedFamilies { field: &'static str },
    #[error("spec.gateway {0:?} is not an address of the pool's family")]
    Gateway(String),
    #[error("spec.prefix {0} is out of range for the pool's family")]
    Prefix(i32),
}

/// The addresses a pool may hand out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocatable {
    ipv4: bool,
    /// Sorted, disjoint and not adjacent.
    spans: Vec<Span>,
    gateway: Option<u128>,
}

impl Allocatable {
    /// The allocatable set of a pool spec.
    pub fn from_spec(spec: &InClusterIPPoolSpec) -> Result<Self, SpecError> {
        let (ipv4, addresses) = parse_list(&spec.addresses, "addresses", None)?.ok_or(SpecError::NoAddresses)?;
        let addresses = merge(addresses);
        let bits = if ipv4 { 32 } else { 128 };
        let prefix = u32::try_from(spec.prefix).ok().filter(|p| *p <= bits).ok_or(SpecError::Prefix(spec.prefix))?;
        let mut remove = Vec::new();
        if let Some((_, excluded)) =
            parse_list(spec.excluded_addresses.as_deref().unwrap_or_default(), "excludedAddresses", Some(ipv4))?
        {
            remove.extend(excluded);
        }
        if spec.allocate_reserved_ip_addresses != Some(true)
            && let Some(&(first, _)) = addresses.first()
        {
            // The subnet is the one the first address and the prefix make (admission keeps
            // every entry inside it).
            let host = host_mask(bits - prefix);
            let network = first & !host;
            remove.push((network, network));
            if ipv4 {
                let broadcast = network | host;
                remove.push((broadcast, broadcast));
            }
        }
        let gateway = match spec.gateway.as_deref() {
            None => None,
            Some(g) => {
                let ip: IpAddr = g.parse().map_err(|_| SpecError::Gateway(g.to_string()))?;
                Some(number(ip, ipv4).ok_or_else(|| SpecError::Gateway(g.to_string()))?)
            }
        };
        remove.extend(gateway.map(|g| (g, g)));
        Ok(Self { ipv4, spans: subtract(&addresses, &merge(remove)), gateway })
    }

    pub fn is_ipv4(&self) -> bool {
        self.ipv4
    }

    /// The gateway as a number, when the pool has one.
    pub fn gateway(&self) -> Option<u128> {
        self.gateway
    }

    /// How many addresses the set holds (saturating: `::/0` holds one more than u128 counts).
    pub fn total(&self) -> u128 {
        self.spans.iter().fold(0u128, |n, (s, e)| n.saturating_add((e - s).saturating_add(1)))
    }

    /// True if `ip` is in the set.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let Some(n) = number(ip, self.ipv4) else { return false };
        let i = self.spans.partition_point(|(_, e)| *e < n);
        self.spans.get(i).is_some_and(|(s, _)| *s <= n)
    }

    /// The lowest address of the set not in `used` (numbers of the pool's family).
    pub fn first_free(&self, used: &BTreeSet<u128>) -> Option<IpAddr> {
        for &(start, end) in &self.spans {
            // `None` once the span's last address was found in use at u128::MAX.
            let mut candidate = Some(start);
            for &u in used.range(start..=end) {
                match candidate {
                    Some(c) if u > c => break,
                    Some(c) if u == c => candidate = c.checked_add(1),
                    _ => {}
                }
            }
            if let Some(c) = candidate.filter(|c| *c <= end) {
                return Some(address(c, self.ipv4));
            }
        }
        None
    }

    /// The pool's address counts with `used` the addresses of its IPAddresses (as written;
    /// one that does not parse counts as out of range). Counts saturate at `i64::MAX`.
    pub fn summary<'a>(&self, used: impl IntoIterator<Item = &'a str>) -> IPAddressStatusSummary {
        let (mut count, mut out_of_range) = (0i64, 0i64);
        for a in used {
            count = count.saturating_add(1);
            if !a.parse().is_ok_and(|ip| self.contains(ip)) {
                out_of_range = out_of_range.saturating_add(1);
            }
        }
        let total = i64::try_from(self.total()).unwrap_or(i64::MAX);
        IPAddressStatusSummary { total, used: count, free: total.saturating_sub(count), out_of_range }
    }
}

/// The numbers of `addresses` (IPAddress `spec.address` values) of the given family; others
/// are skipped.
pub fn numbers<'a>(addresses: impl IntoIterator<Item = &'a str>, ipv4: bool) -> BTreeSet<u128> {
    addresses.into_iter().filter_map(|a| a.parse().ok().and_then(|ip| number(ip, ipv4))).collect()
}

/// `ip` as a number if it is of the family.
fn number(ip: IpAddr, ipv4: bool) -> Option<u128> {
    (ip.is_ipv4() == ipv4).then(|| ip_to_u128(ip))
}

fn address(n: u128, ipv4: bool) -> IpAddr {
    match u32::try_from(n) {
        Ok(v4) if ipv4 => IpAddr::V4(Ipv4Addr::from(v4)),
        _ => IpAddr::V6(Ipv6Addr::from(n)),
    }
}

/// The host part of an address with `host_bits` of host.
fn host_mask(host_bits: u32) -> u128 {
    if host_bits >= 128 { u128::MAX } else { (1u128 << host_bits) - 1 }
}

/// Parses entries into spans of one family (the first entry's, or `family` when given).
/// `None` for an empty list.
fn parse_list(
    entries: &[String],
    field: &'static str,
    family: Option<bool>,
) -> Result<Option<(bool, Vec<Span>)>, SpecError> {
    let mut spans = Vec::with_capacity(entries.len());
    let mut family = family;
    for e in entries {
        let r = IpRange::parse(e.trim()).map_err(|source| SpecError::Entry { field, source })?;
        let ipv4 = *family.get_or_insert(r.is_ipv4());
        if r.is_ipv4() != ipv4 {
            return Err(SpecError::MixedFamilies { field });
        }
        spans.push((ip_to_u128(r.start), ip_to_u128(r.end)));
    }
    Ok(family.filter(|_| !spans.is_empty()).map(|f| (f, spans)))
}

/// Sorts spans and joins the overlapping or adjacent ones.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if last.1.checked_add(1).is_none_or(|next| s <= next) => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// `spans` without `remove` (both merged).
fn subtract(spans: &[Span], remove: &[Span]) -> Vec<Span> {
    let mut out = Vec::with_capacity(spans.len());
    let mut first = 0;
    for &(start, end) in spans {
        // Removals ending before this span cannot touch it or any later one.
        while remove.get(first).is_some_and(|r| r.1 < start) {
            first += 1;
        }
        let mut from = Some(start);
        for &(rs, re) in remove[first..].iter().take_while(|r| r.0 <= end) {
            let Some(s) = from else { break };
            if rs > s {
                out.push((s, rs - 1));
            }
            // `re < end` leaves a rest; otherwise the span is used up.
            from = if re < end { Some(s.max(re + 1)) } else { None };
        }
        if let Some(s) = from {
            out.push((s, end));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn spec(addresses: &[&str], prefix: i32, gateway: Option<&str>, excluded: &[&str]) -> InClusterIPPoolSpec {
        InClusterIPPoolSpec {
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
            prefix,
            gateway: gateway.map(String::from),
            excluded_addresses: (!excluded.is_empty()).then(|| excluded.iter().map(|a| a.to_string()).collect()),
            ..Default::default()
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    /// Allocates until the pool is exhausted, as the claim controller does: each address
    /// handed out joins the in-use set.
    fn drain(pool: &Allocatable, limit: usize) -> Vec<IpAddr> {
        let mut used: BTreeSet<u128> = pool.gateway().into_iter().collect();
        let mut out = Vec::new();
        while let Some(a) = pool.first_free(&used) {
            assert!(used.insert(ip_to_u128(a)), "{a} handed out twice");
            out.push(a);
            assert!(out.len() <= limit, "more than {limit} addresses");
        }
        out
    }

    #[test]
    fn ipv4_slash_22_with_gateway_and_exclusions() {
        let s = spec(&["10.0.0.0/22"], 22, Some("10.0.0.1"), &["10.0.1.0-10.0.1.9", "10.0.2.50"]);
        let pool = Allocatable::from_spec(&s).expect("pool");
        // 1024, minus network, broadcast, gateway, and 11 excluded.
        assert_eq!(pool.total(), 1024 - 3 - 11);
        let got = drain(&pool, 2000);
        assert_eq!(got.len(), 1010);
        assert_eq!(got.iter().collect::<HashSet<_>>().len(), got.len(), "unique");
        assert_eq!(got[0], ip("10.0.0.2"), "first fit after network and gateway");
        assert_eq!(got.last(), Some(&ip("10.0.3.254")));
        for never in ["10.0.0.0", "10.0.0.1", "10.0.3.255", "10.0.1.0", "10.0.1.9", "10.0.2.50"] {
            assert!(!got.contains(&ip(never)), "{never} handed out");
            assert!(!pool.contains(ip(never)));
        }
        assert!(got.contains(&ip("10.0.1.10")) && got.contains(&ip("10.0.2.49")) && got.contains(&ip("10.0.2.51")));
        let sorted = got.windows(2).all(|w| ip_to_u128(w[0]) < ip_to_u128(w[1]));
        assert!(sorted, "lowest first");
    }

    #[test]
    fn a_freed_address_is_the_next_one_handed_out() {
        let pool = Allocatable::from_spec(&spec(&["10.0.0.10-10.0.0.19"], 24, None, &[])).expect("pool");
        let mut used = numbers(["10.0.0.10", "10.0.0.11", "10.0.0.12"], true);
        assert_eq!(pool.first_free(&used), Some(ip("10.0.0.13")));
        used.remove(&ip_to_u128(ip("10.0.0.11")));
        assert_eq!(pool.first_free(&used), Some(ip("10.0.0.11")));
    }

    #[test]
    fn ranges_single_addresses_and_cidrs_mixed() {
        let s = spec(&["10.0.0.200", "10.0.0.10-10.0.0.12", "10.0.0.64/30", "10.0.0.11-10.0.0.13"], 24, None, &[]);
        let pool = Allocatable::from_spec(&s).expect("pool");
        // 10-13 (overlapping entries counted once), 64-67, 200.
        assert_eq!(pool.total(), 4 + 4 + 1);
        let got: Vec<String> = drain(&pool, 20).iter().map(ToString::to_string).collect();
        let want = ["10.0.0.10", "10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.64", "10.0.0.65"];
        assert_eq!(got[..6], want);
        assert_eq!(got[6..], ["10.0.0.66", "10.0.0.67", "10.0.0.200"]);
    }

    #[test]
    fn reserved_addresses_are_handed_out_only_when_asked() {
        let mut s = spec(&["192.168.1.0/29"], 29, None, &[]);
        let strict = Allocatable::from_spec(&s).expect("pool");
        assert_eq!(strict.total(), 6);
        assert!(!strict.contains(ip("192.168.1.0")) && !strict.contains(ip("192.168.1.7")));
        s.allocate_reserved_ip_addresses = Some(true);
        let all = Allocatable::from_spec(&s).expect("pool");
        assert_eq!(all.total(), 8);
        assert_eq!(all.first_free(&BTreeSet::new()), Some(ip("192.168.1.0")));
        // The subnet is the first address's: a range starting mid-subnet keeps its first.
        let mid = Allocatable::from_spec(&spec(&["10.0.0.5-10.0.0.6"], 24, None, &[])).expect("pool");
        assert_eq!(mid.total(), 2);
    }

    #[test]
    fn ipv6_pools_are_counted_not_enumerated() {
        let s = spec(&["fd00::/64"], 64, Some("fd00::1"), &["fd00::ff"]);
        let pool = Allocatable::from_spec(&s).expect("pool");
        // The subnet-router anycast address (first) is reserved; IPv6 has no broadcast.
        assert_eq!(pool.total(), (1u128 << 64) - 3);
        assert!(pool.contains(ip("fd00::ffff:ffff:ffff:ffff")));
        let mut used = numbers(["fd00::2", "fd00::3"], false);
        used.insert(ip_to_u128(ip("fd00::1")));
        assert_eq!(pool.first_free(&used), Some(ip("fd00::4")));
        used.extend((4..=0xfe_u128).map(|n| ip_to_u128(ip("fd00::")) + n));
        assert_eq!(pool.first_free(&used), Some(ip("fd00::100")), "skips the excluded address");
        let summary = pool.summary(["fd00::2", "fd00::1", "10.0.0.1", "nonsense"]);
        assert_eq!((summary.used, summary.out_of_range), (4, 3));
        assert_eq!(summary.total, i64::MAX, "saturated");
        assert_eq!(summary.free, i64::MAX - 4);
        let everything = Allocatable::from_spec(&spec(&["::/0"], 0, None, &[])).expect("pool");
        assert_eq!(everything.total(), u128::MAX);
        let top = BTreeSet::from([u128::MAX]);
        assert_eq!(everything.first_free(&top), Some(ip("::1")));
        let last = Allocatable::from_spec(&spec(&["ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127"], 127, None, &[]));
        let last = last.expect("pool");
        assert_eq!(last.total(), 1);
        assert_eq!(last.first_free(&top), None, "the only address at the top of the space is in use");
    }

    #[test]
    fn exhaustion_and_status_counts() {
        let pool = Allocatable::from_spec(&spec(&["10.0.0.1-10.0.0.3"], 24, Some("10.0.0.2"), &[])).expect("pool");
        assert_eq!(drain(&pool, 5), [ip("10.0.0.1"), ip("10.0.0.3")]);
        let full = numbers(["10.0.0.1", "10.0.0.3"], true);
        assert_eq!(pool.first_free(&full), None);
        let s = pool.summary(["10.0.0.1", "10.0.0.3", "10.0.0.9"]);
        assert_eq!(
            s,
            IPAddressStatusSummary { total: 2, used: 3, free: -1, out_of_range: 1 },
            "used counts addresses no longer in the pool, as upstream"
        );
    }

    #[test]
    fn unusable_specs() {
        let cases = [
            (spec(&[], 24, None, &[]), SpecError::NoAddresses),
            (spec(&["10.0.0.1", "fd00::1"], 24, None, &[]), SpecError::MixedFamilies { field: "addresses" }),
            (spec(&["10.0.0.1"], 24, None, &["fd00::1"]), SpecError::MixedFamilies { field: "excludedAddresses" }),
            (spec(&["10.0.0.1"], 33, None, &[]), SpecError::Prefix(33)),
            (spec(&["10.0.0.1"], -1, None, &[]), SpecError::Prefix(-1)),
            (spec(&["10.0.0.1"], 24, Some("fd00::1"), &[]), SpecError::Gateway("fd00::1".into())),
        ];
        for (s, want) in cases {
            assert_eq!(Allocatable::from_spec(&s), Err(want), "{s:?}");
        }
        let bad = Allocatable::from_spec(&spec(&["10.0.0.1/40"], 24, None, &[]));
        assert!(matches!(bad, Err(SpecError::Entry { field: "addresses", .. })), "{bad:?}");
    }

    #[test]
    fn subtraction_and_merging() {
        assert_eq!(merge(vec![(5, 9), (1, 2), (3, 3), (20, 30), (25, 26)]), [(1, 3), (5, 9), (20, 30)]);
        assert_eq!(merge(vec![(0, u128::MAX), (7, 8)]), [(0, u128::MAX)]);
        let spans = [(0, 10), (20, 30), (40, 50)];
        assert_eq!(subtract(&spans, &[(5, 25)]), [(0, 4), (26, 30), (40, 50)]);
        assert_eq!(subtract(&spans, &[(0, 0), (10, 10), (41, 49)]), [(1, 9), (20, 30), (40, 40), (50, 50)]);
        assert_eq!(subtract(&spans, &[(0, 100)]), []);
        assert_eq!(subtract(&spans, &[]), spans);
        assert_eq!(subtract(&[(0, u128::MAX)], &[(u128::MAX, u128::MAX)]), [(0, u128::MAX - 1)]);
    }
}
