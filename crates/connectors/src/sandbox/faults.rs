//! Seeded, deterministic fault injection for `POST /v1/refunds`.
//!
//! A [`FaultPlan`] is an ordered list of [`FaultRule`]s. For each refund
//! request the rules are tried in order and the first one whose conditions
//! all hold decides the fault; no rule holding means a normal answer.
//! Probabilities draw from one `StdRng` seeded from the configured seed, so
//! the same seed and the same request sequence give the same faults.

use std::collections::{HashMap, VecDeque};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// What goes wrong with one refund request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultMode {
    /// Execute and record the refund, then hang for the configured `hang`
    /// before answering, so the client times out although the refund exists.
    ExecuteThenTimeout,
    /// Hang for `hang` without executing anything, then answer 504.
    TimeoutBeforeExecute,
    /// Answer 500 without executing anything.
    ServerError,
    /// Answer 429 with `Retry-After: 1` without executing anything.
    RateLimited,
    /// Wait `ms` milliseconds (holding the key as in flight), then answer
    /// normally.
    Latency { ms: u64 },
}

/// One rule: a mode and the conditions under which it fires. Every condition
/// that is set must hold; a rule with none fires on every request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRule {
    pub mode: FaultMode,
    /// Fire with this probability (0.0 to 1.0), drawn from the seeded RNG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// Fire only on the Nth refund request since the plan was set (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth_request: Option<u64>,
    /// Fire only for idempotency keys starting with this prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_prefix: Option<String>,
    /// Fire only on the first request seen for a key, so that a retry or a
    /// status query of the same key goes through.
    #[serde(default)]
    pub first_attempt_only: bool,
}

impl FaultRule {
    /// A rule that fires on every refund request.
    #[must_use]
    pub fn always(mode: FaultMode) -> Self {
        Self {
            mode,
            probability: None,
            nth_request: None,
            key_prefix: None,
            first_attempt_only: false,
        }
    }

    #[must_use]
    pub fn with_probability(mut self, probability: f64) -> Self {
        self.probability = Some(probability);
        self
    }

    #[must_use]
    pub fn on_nth_request(mut self, n: u64) -> Self {
        self.nth_request = Some(n);
        self
    }

    #[must_use]
    pub fn for_key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = Some(prefix.into());
        self
    }

    #[must_use]
    pub fn first_attempt_only(mut self) -> Self {
        self.first_attempt_only = true;
        self
    }
}

/// The ordered rules of a run. Empty: no faults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FaultPlan {
    pub rules: Vec<FaultRule>,
}

/// A fault plan that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fault plan: {message}")]
pub struct InvalidFaultPlan {
    pub message: String,
}

impl FaultPlan {
    #[must_use]
    pub fn new(rules: Vec<FaultRule>) -> Self {
        Self { rules }
    }

    /// # Errors
    ///
    /// When a probability lies outside 0.0..=1.0 or `nth_request` is 0.
    pub fn validate(&self) -> Result<(), InvalidFaultPlan> {
        for (index, rule) in self.rules.iter().enumerate() {
            if let Some(p) = rule.probability
                && !(0.0..=1.0).contains(&p)
            {
                return Err(InvalidFaultPlan {
                    message: format!("rule {index}: probability {p} is not within 0.0..=1.0"),
                });
            }
            if rule.nth_request == Some(0) {
                return Err(InvalidFaultPlan {
                    message: format!("rule {index}: nth_request counts from 1"),
                });
            }
        }
        Ok(())
    }
}

/// One decision, kept so a run can be inspected and compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultDecision {
    /// 1-based position of the request since the plan was set.
    pub request: u64,
    pub idempotency_key: String,
    /// 1-based attempt number for this key.
    pub attempt: u32,
    pub fault: Option<FaultMode>,
}

const HISTORY_LIMIT: usize = 1_000;

/// The plan plus its running state: RNG, counters, recent decisions.
#[derive(Debug)]
pub(crate) struct FaultEngine {
    plan: FaultPlan,
    seed: u64,
    rng: StdRng,
    requests_seen: u64,
    attempts: HashMap<String, u32>,
    history: VecDeque<FaultDecision>,
}

impl FaultEngine {
    pub(crate) fn new(plan: FaultPlan, seed: u64) -> Self {
        Self {
            plan,
            seed,
            rng: StdRng::seed_from_u64(seed),
            requests_seen: 0,
            attempts: HashMap::new(),
            history: VecDeque::new(),
        }
    }

    pub(crate) fn plan(&self) -> &FaultPlan {
        &self.plan
    }

    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    pub(crate) fn requests_seen(&self) -> u64 {
        self.requests_seen
    }

    pub(crate) fn history(&self) -> Vec<FaultDecision> {
        self.history.iter().cloned().collect()
    }

    /// Count this request and decide its fault.
    pub(crate) fn decide(&mut self, key: &str) -> Option<FaultMode> {
        self.requests_seen += 1;
        let request = self.requests_seen;
        let attempt = {
            let count = self.attempts.entry(key.to_owned()).or_insert(0);
            *count = count.saturating_add(1);
            *count
        };
        let fault = self.first_matching_rule(key, request, attempt);
        if self.history.len() == HISTORY_LIMIT {
            self.history.pop_front();
        }
        self.history.push_back(FaultDecision {
            request,
            idempotency_key: key.to_owned(),
            attempt,
            fault,
        });
        fault
    }

    fn first_matching_rule(&mut self, key: &str, request: u64, attempt: u32) -> Option<FaultMode> {
        for rule in &self.plan.rules {
            if rule.nth_request.is_some_and(|n| n != request)
                || rule
                    .key_prefix
                    .as_deref()
                    .is_some_and(|p| !key.starts_with(p))
                || (rule.first_attempt_only && attempt != 1)
            {
                continue;
            }
            // Drawn only when the other conditions hold, so adding a key
            // prefix to one rule does not shift the draws of another.
            if let Some(p) = rule.probability
                && self.rng.r#gen::<f64>() >= p
            {
                continue;
            }
            return Some(rule.mode);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(engine: &mut FaultEngine, keys: &[&str]) -> Vec<Option<FaultMode>> {
        keys.iter().map(|key| engine.decide(key)).collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_fault_sequence() {
        let plan = FaultPlan::new(vec![
            FaultRule::always(FaultMode::ServerError).with_probability(0.5),
        ]);
        let keys: Vec<String> = (0..64).map(|i| format!("k{i}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let first = run(&mut FaultEngine::new(plan.clone(), 7), &keys);
        let second = run(&mut FaultEngine::new(plan.clone(), 7), &keys);
        let other_seed = run(&mut FaultEngine::new(plan, 8), &keys);
        assert_eq!(first, second);
        assert_ne!(first, other_seed);
        assert!(first.iter().any(Option::is_some) && first.iter().any(Option::is_none));
    }

    #[test]
    fn first_attempt_only_spares_the_retry() {
        let plan = FaultPlan::new(vec![
            FaultRule::always(FaultMode::ServerError).first_attempt_only(),
        ]);
        let mut engine = FaultEngine::new(plan, 0);
        assert_eq!(
            run(&mut engine, &["a", "a", "b"]),
            vec![
                Some(FaultMode::ServerError),
                None,
                Some(FaultMode::ServerError)
            ]
        );
    }

    #[test]
    fn nth_request_and_key_prefix_narrow_a_rule() {
        let plan = FaultPlan::new(vec![
            FaultRule::always(FaultMode::RateLimited).on_nth_request(2),
            FaultRule::always(FaultMode::Latency { ms: 5 }).for_key_prefix("slow_"),
        ]);
        let mut engine = FaultEngine::new(plan, 0);
        assert_eq!(
            run(&mut engine, &["a", "b", "slow_c", "d"]),
            vec![
                None,
                Some(FaultMode::RateLimited),
                Some(FaultMode::Latency { ms: 5 }),
                None
            ]
        );
    }

    #[test]
    fn probabilities_outside_the_unit_interval_are_refused() {
        let plan = FaultPlan::new(vec![
            FaultRule::always(FaultMode::ServerError).with_probability(1.5),
        ]);
        assert!(plan.validate().is_err());
    }

    #[test]
    fn rules_read_from_json() {
        let plan: FaultPlan = serde_json::from_str(
            r#"[{"mode":"execute_then_timeout","first_attempt_only":true},
                {"mode":{"latency":{"ms":200}},"key_prefix":"slow_","probability":0.5}]"#,
        )
        .unwrap_or_default();
        assert_eq!(
            plan,
            FaultPlan::new(vec![
                FaultRule::always(FaultMode::ExecuteThenTimeout).first_attempt_only(),
                FaultRule::always(FaultMode::Latency { ms: 200 })
                    .with_probability(0.5)
                    .for_key_prefix("slow_"),
            ])
        );
    }
}
