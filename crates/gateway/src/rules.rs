//! The rules a chain of verified envelopes must keep, each decided from the
//! signed envelopes alone: how a child follows from its parent, whether the
//! receiver is already on the route, how deep the chain is, whether each
//! budget fits what remains of its parent's, and whether the envelope is
//! fresh.

use crate::envelope::TaskEnvelope;
use crate::names::GroupName;
use crate::refusal::Refusal;
use chrono::{DateTime, Duration, Utc};
use std::collections::HashSet;

fn broken(envelope: &TaskEnvelope, why: impl Into<String>) -> Refusal {
    Refusal::ChainBroken {
        task_key: envelope.task_key.clone(),
        why: why.into(),
    }
}

fn route_text(route: &[GroupName]) -> String {
    route
        .iter()
        .map(GroupName::as_str)
        .collect::<Vec<_>>()
        .join(" → ")
}

/// Each envelope of `chain` (root first) follows from the one before: same
/// root, the parent's key, sent by the group the parent was sent to, the
/// route extended by exactly that group, one hop deeper, created no
/// earlier. A root names itself as root, has no parent and a route of its
/// sender alone.
///
/// # Errors
/// [`Refusal::ChainBroken`] at the first envelope that does not follow.
pub fn check_links(chain: &[&TaskEnvelope]) -> Result<(), Refusal> {
    let mut parent: Option<&TaskEnvelope> = None;
    for envelope in chain {
        if envelope.route.last() != Some(&envelope.from) {
            return Err(broken(envelope, "the route does not end with the sender"));
        }
        if envelope.route.len() != envelope.depth as usize + 1 {
            return Err(broken(
                envelope,
                format!(
                    "depth {} does not match a route of {} groups",
                    envelope.depth,
                    envelope.route.len()
                ),
            ));
        }
        match parent {
            None => {
                if envelope.parent_key.is_some() || envelope.root_key != envelope.task_key {
                    return Err(broken(
                        envelope,
                        "a task without an embedded parent must be its own root",
                    ));
                }
                if envelope.parent_remaining.is_some() {
                    return Err(broken(envelope, "a root task has no parent budget"));
                }
            }
            Some(parent) => {
                if envelope.parent_key.as_ref() != Some(&parent.task_key) {
                    return Err(broken(
                        envelope,
                        "parent_key is not the embedded parent's key",
                    ));
                }
                if envelope.root_key != parent.root_key {
                    return Err(broken(envelope, "root_key differs from the parent's"));
                }
                if envelope.from != parent.to {
                    return Err(broken(
                        envelope,
                        format!(
                            "sent by {} but the parent was sent to {}",
                            envelope.from, parent.to
                        ),
                    ));
                }
                let mut expected = parent.route.clone();
                expected.push(parent.to.clone());
                if envelope.route != expected {
                    return Err(broken(
                        envelope,
                        format!(
                            "the route {} does not extend the parent's {}",
                            route_text(&envelope.route),
                            route_text(&parent.route)
                        ),
                    ));
                }
                if envelope.created < parent.created {
                    return Err(broken(envelope, "created before its parent"));
                }
            }
        }
        parent = Some(envelope);
    }
    Ok(())
}

/// The task is for `me`, and `me` is not already on its route (a task that
/// passed through this group would come back to it: a cycle, refused from
/// the signed route alone), nor is any group on it twice.
///
/// # Errors
/// [`Refusal::WrongReceiver`] or [`Refusal::Cycle`].
pub fn check_route(envelope: &TaskEnvelope, me: &GroupName) -> Result<(), Refusal> {
    if &envelope.to != me {
        return Err(Refusal::WrongReceiver {
            to: envelope.to.clone(),
            me: me.clone(),
        });
    }
    let mut seen = HashSet::new();
    for group in envelope.route.iter().chain([me]) {
        if !seen.insert(group) {
            return Err(Refusal::Cycle {
                group: group.clone(),
                route: route_text(&envelope.route),
            });
        }
    }
    Ok(())
}

/// The chain is no deeper than `limit` hops.
///
/// # Errors
/// [`Refusal::TooDeep`].
pub fn check_depth(envelope: &TaskEnvelope, limit: u32) -> Result<(), Refusal> {
    if envelope.depth > limit {
        return Err(Refusal::TooDeep {
            depth: envelope.depth,
            limit,
        });
    }
    Ok(())
}

/// Down the chain, what each sender says remains of its parent's budget
/// fits within the parent's budget, and the child's budget within that.
///
/// # Errors
/// [`Refusal::OverBudget`] at the first envelope asking too much, or
/// [`Refusal::ChainBroken`] for a child that does not say what remains.
pub fn check_budgets(chain: &[&TaskEnvelope]) -> Result<(), Refusal> {
    for pair in chain.windows(2) {
        let (parent, child) = (pair[0], pair[1]);
        let remaining = child.parent_remaining.as_ref().ok_or_else(|| {
            broken(
                child,
                "a delegated task must say what remains of its parent's budget",
            )
        })?;
        let over = |excess| Refusal::OverBudget {
            task_key: child.task_key.clone(),
            excess,
        };
        remaining.fits_within(&parent.budget).map_err(over)?;
        child.budget.fits_within(remaining).map_err(over)?;
    }
    Ok(())
}

/// How old and how far in the future an envelope may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayWindow {
    /// Envelopes created longer ago are refused (default 5 minutes); a
    /// nonce must be remembered at least this long.
    pub max_age: Duration,
    /// Clock difference tolerated for envelopes from the future.
    pub max_skew: Duration,
}

impl Default for ReplayWindow {
    fn default() -> Self {
        Self {
            max_age: Duration::minutes(5),
            max_skew: Duration::seconds(30),
        }
    }
}

impl ReplayWindow {
    /// `created` lies within the window around `now`.
    ///
    /// # Errors
    /// [`Refusal::Stale`] saying by how much it is outside.
    pub fn check(&self, created: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), Refusal> {
        if created < now - self.max_age {
            return Err(Refusal::Stale(format!(
                "created {} s ago; at most {} s are accepted",
                (now - created).num_seconds(),
                self.max_age.num_seconds()
            )));
        }
        if created > now + self.max_skew {
            return Err(Refusal::Stale(format!(
                "created {} s in the future; at most {} s of clock difference are accepted",
                (created - now).num_seconds(),
                self.max_skew.num_seconds()
            )));
        }
        Ok(())
    }
}
