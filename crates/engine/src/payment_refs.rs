//! Which payment each proposal refunds, remembered in memory: an approval
//! asks the provider about the charge before it is queued, and would
//! otherwise read the proposal from the database first, once per approval.
//! A proposal's content never changes (a different payment is a new
//! proposal), so a remembered reference is never stale; a miss (another
//! replica submitted it, a restart) reads the database. Kept apart from the
//! use cases because it exists only for throughput (README, Benchmarks).

use std::collections::HashMap;
use std::sync::Mutex;

/// At most this many references are held; then the map starts over.
const CAPACITY: usize = 1 << 16;

#[derive(Debug, Default)]
pub struct PaymentRefs {
    by_proposal: Mutex<HashMap<String, String>>,
}

impl PaymentRefs {
    pub fn get(&self, proposal_id: &str) -> Option<String> {
        self.by_proposal
            .lock()
            .ok()
            .and_then(|map| map.get(proposal_id).cloned())
    }

    pub fn remember(&self, proposal_id: &str, payment_reference: &str) {
        if let Ok(mut map) = self.by_proposal.lock() {
            if map.len() >= CAPACITY {
                map.clear();
            }
            map.insert(proposal_id.to_owned(), payment_reference.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_reference_is_found_and_an_unknown_one_is_not() {
        let refs = PaymentRefs::default();
        refs.remember("prp_1", "pay_4821");
        assert_eq!(refs.get("prp_1").as_deref(), Some("pay_4821"));
        assert_eq!(refs.get("prp_2"), None);
    }

    #[test]
    fn the_map_starts_over_instead_of_growing_without_bound() {
        let refs = PaymentRefs::default();
        for n in 0..=CAPACITY {
            refs.remember(&format!("prp_{n}"), "pay");
        }
        assert_eq!(refs.get(&format!("prp_{CAPACITY}")).as_deref(), Some("pay"));
        assert_eq!(refs.get("prp_0"), None);
    }
}
