//! The sandbox's ledger: every refund ever made, kept for the whole run.
//! Unlike idempotency keys it never forgets, so it can prove how many
//! refunds each key produced.

use std::collections::HashMap;

use super::wire::{LedgerEntry, LedgerView, SandboxRefund};

#[derive(Debug, Default)]
pub(crate) struct Ledger {
    refunds: Vec<SandboxRefund>,
    /// Positions in `refunds` per key, so lookups stay constant-time however
    /// long the sandbox has run.
    by_key: HashMap<String, Vec<usize>>,
    /// Positions per payment reference, for a charge's refund list.
    by_payment: HashMap<String, Vec<usize>>,
}

impl Ledger {
    pub(crate) fn record(&mut self, refund: SandboxRefund) {
        self.by_key
            .entry(refund.idempotency_key.clone())
            .or_default()
            .push(self.refunds.len());
        self.by_payment
            .entry(refund.payment_reference.clone())
            .or_default()
            .push(self.refunds.len());
        self.refunds.push(refund);
    }

    /// Every refund, oldest first.
    pub(crate) fn all(&self) -> Vec<SandboxRefund> {
        self.refunds.clone()
    }

    /// Refunds made under `key`, oldest first.
    pub(crate) fn for_key(&self, key: &str) -> Vec<SandboxRefund> {
        self.by_key
            .get(key)
            .map(|positions| positions.iter().map(|&i| self.refunds[i].clone()).collect())
            .unwrap_or_default()
    }

    /// Refunds made on the payment `reference`, oldest first.
    pub(crate) fn for_payment(&self, reference: &str) -> Vec<SandboxRefund> {
        self.by_payment
            .get(reference)
            .map(|positions| positions.iter().map(|&i| self.refunds[i].clone()).collect())
            .unwrap_or_default()
    }

    /// The first refund made under `key`: the one a status query reports.
    pub(crate) fn first_for_key(&self, key: &str) -> Option<SandboxRefund> {
        let first = *self.by_key.get(key)?.first()?;
        Some(self.refunds[first].clone())
    }

    /// Refunds grouped per key, keys in order of their first refund.
    pub(crate) fn view(&self) -> LedgerView {
        let mut keys: Vec<LedgerEntry> = Vec::with_capacity(self.by_key.len());
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(self.by_key.len());
        for refund in &self.refunds {
            match seen.get(refund.idempotency_key.as_str()) {
                Some(&at) => {
                    keys[at].count += 1;
                    keys[at].refunds.push(refund.clone());
                }
                None => {
                    seen.insert(&refund.idempotency_key, keys.len());
                    keys.push(LedgerEntry {
                        idempotency_key: refund.idempotency_key.clone(),
                        count: 1,
                        refunds: vec![refund.clone()],
                    });
                }
            }
        }
        let duplicated_keys = keys
            .iter()
            .filter(|entry| entry.count > 1)
            .map(|entry| entry.idempotency_key.clone())
            .collect();
        LedgerView {
            total_refunds: self.refunds.len(),
            keys,
            duplicated_keys,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::Utc;

    use super::*;
    use crate::sandbox::wire::SandboxRefundStatus;

    fn refund(id: &str, key: &str) -> SandboxRefund {
        SandboxRefund {
            id: id.to_owned(),
            idempotency_key: key.to_owned(),
            payment_reference: "pay_1".to_owned(),
            amount_minor: 100,
            currency: "EUR".to_owned(),
            status: SandboxRefundStatus::Succeeded,
            failure_reason: None,
            metadata: BTreeMap::new(),
            created_at: Utc::now(),
        }
    }

    #[test]
    fn the_view_groups_refunds_per_key_and_names_duplicates() {
        let mut ledger = Ledger::default();
        ledger.record(refund("re_1", "a"));
        ledger.record(refund("re_2", "b"));
        ledger.record(refund("re_3", "a"));
        let view = ledger.view();
        assert_eq!(view.total_refunds, 3);
        assert_eq!(view.count_for("a"), 2);
        assert_eq!(view.count_for("b"), 1);
        assert_eq!(view.count_for("c"), 0);
        assert_eq!(view.duplicated_keys, vec!["a".to_owned()]);
        assert_eq!(
            ledger.first_for_key("a").map(|r| r.id),
            Some("re_1".to_owned())
        );
    }
}
