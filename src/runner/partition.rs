//! `--partition hash:M/N` and `count:M/N`, as in cargo-nextest: split one run's tests across N
//! machines. `count` deals tests round-robin in name order; `hash` buckets by a fixed FNV-1a
//! hash of the test name, so a test stays in its bucket when others are added.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    Hash { m: u64, n: u64 },
    Count { m: u64, n: u64 },
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Partition::Hash { m, n } => write!(f, "hash:{m}/{n}"),
            Partition::Count { m, n } => write!(f, "count:{m}/{n}"),
        }
    }
}

impl std::str::FromStr for Partition {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let err =
            || format!("invalid partition `{s}`: expected hash:M/N or count:M/N with 1 <= M <= N");
        let (kind, rest) = s.split_once(':').ok_or_else(err)?;
        let (m, n) = rest.split_once('/').ok_or_else(err)?;
        let m: u64 = m.trim().parse().map_err(|_| err())?;
        let n: u64 = n.trim().parse().map_err(|_| err())?;
        if m == 0 || n == 0 || m > n {
            return Err(err());
        }
        match kind {
            "hash" => Ok(Partition::Hash { m, n }),
            "count" => Ok(Partition::Count { m, n }),
            _ => Err(err()),
        }
    }
}

fn fnv1a(s: &str) -> u64 {
    crate::fingerprint::fnv1a(s.as_bytes())
}

impl Partition {
    /// Keep the names of this partition; `names` must be in the run's stable order.
    pub fn select(&self, names: &[String]) -> Vec<bool> {
        match *self {
            Partition::Count { m, n } => {
                (0..names.len()).map(|i| (i as u64 % n) + 1 == m).collect()
            }
            Partition::Hash { m, n } => names.iter().map(|x| fnv1a(x) % n + 1 == m).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_cover_every_test_once() {
        let names: Vec<String> = (0..50).map(|i| format!("suite::t{i}")).collect();
        for kind in ["hash", "count"] {
            let mut seen = vec![0; names.len()];
            for m in 1..=3 {
                let p: Partition = format!("{kind}:{m}/3").parse().unwrap();
                for (i, keep) in p.select(&names).into_iter().enumerate() {
                    if keep {
                        seen[i] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|c| *c == 1), "{kind}");
        }
        assert!("hash:0/2".parse::<Partition>().is_err());
        assert!("count:3/2".parse::<Partition>().is_err());
        assert!("foo:1/2".parse::<Partition>().is_err());
    }
}
