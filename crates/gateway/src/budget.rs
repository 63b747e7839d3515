//! What a task may spend. A child's budget never exceeds what remains of its
//! parent's: the receiver checks it from the signed chain alone, so a group
//! cannot grant a peer more than it was given itself.

use chrono::{DateTime, Utc};
use domain::Money;
use serde::{Deserialize, Serialize};

/// A task's limits: model calls, agent steps, model tokens, money (None:
/// the task may not move money) and a deadline (UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub model_calls: u32,
    pub steps: u32,
    pub tokens: u64,
    pub money: Option<Money>,
    pub deadline: DateTime<Utc>,
}

/// What a task spent, as the group that answered it reports (its own
/// spending and, for a task it passed on, its children's): every
/// dimension of a budget but the deadline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spent {
    pub model_calls: u32,
    pub steps: u32,
    pub tokens: u64,
    pub money: Option<Money>,
}

impl Spent {
    /// One agent step and nothing else: what a desk that answers by rules
    /// spends on a task.
    #[must_use]
    pub fn one_step() -> Self {
        Spent {
            steps: 1,
            ..Spent::default()
        }
    }

    /// This spending and `more` together.
    ///
    /// # Errors
    /// [`BudgetExcess`] (dimension `money`) for money in two currencies,
    /// which no budget covers.
    pub fn plus(&self, more: &Spent) -> Result<Spent, BudgetExcess> {
        let money = match (self.money, more.money) {
            (None, other) | (other, None) => other,
            (Some(a), Some(b)) if a.currency == b.currency => Some(Money::new(
                a.amount_minor.saturating_add(b.amount_minor),
                a.currency,
            )),
            (Some(a), Some(b)) => {
                return Err(BudgetExcess {
                    dimension: "money",
                    asked: format!("{} and {}", a.display(), b.display()),
                    allowed: "one currency".to_owned(),
                });
            }
        };
        Ok(Spent {
            model_calls: self.model_calls.saturating_add(more.model_calls),
            steps: self.steps.saturating_add(more.steps),
            tokens: self.tokens.saturating_add(more.tokens),
            money,
        })
    }
}

/// One dimension of a budget asked beyond what its limit allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BudgetExcess {
    /// `model_calls`, `steps`, `tokens`, `money` or `deadline`.
    pub dimension: &'static str,
    pub asked: String,
    pub allowed: String,
}

impl std::fmt::Display for BudgetExcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} asked {} but only {} remains",
            self.dimension, self.asked, self.allowed
        )
    }
}

fn within<T: PartialOrd + ToString>(
    dimension: &'static str,
    asked: T,
    allowed: T,
) -> Result<(), BudgetExcess> {
    if asked > allowed {
        return Err(BudgetExcess {
            dimension,
            asked: asked.to_string(),
            allowed: allowed.to_string(),
        });
    }
    Ok(())
}

fn money_text(money: Option<Money>) -> String {
    money.map_or_else(|| "no money".to_owned(), |m| m.display())
}

impl Budget {
    /// What remains of this budget once `spent` is charged to it (the
    /// deadline stays).
    ///
    /// # Errors
    /// [`BudgetExcess`] for the first dimension `spent` goes beyond.
    pub fn after(&self, spent: &Spent) -> Result<Budget, BudgetExcess> {
        let as_budget = Budget {
            model_calls: spent.model_calls,
            steps: spent.steps,
            tokens: spent.tokens,
            money: spent.money,
            deadline: self.deadline,
        };
        as_budget.fits_within(self)?;
        Ok(Budget {
            model_calls: self.model_calls - spent.model_calls,
            steps: self.steps - spent.steps,
            tokens: self.tokens - spent.tokens,
            money: match (self.money, spent.money) {
                (Some(limit), Some(used)) => Some(Money::new(
                    limit.amount_minor - used.amount_minor,
                    limit.currency,
                )),
                (limit, _) => limit,
            },
            deadline: self.deadline,
        })
    }

    /// Whether this budget fits inside `limit` in every dimension; the first
    /// dimension that does not is the answer.
    ///
    /// # Errors
    /// [`BudgetExcess`] naming the dimension, what was asked and what the
    /// limit allows. Money in another currency than the limit's exceeds it.
    pub fn fits_within(&self, limit: &Budget) -> Result<(), BudgetExcess> {
        within("model_calls", self.model_calls, limit.model_calls)?;
        within("steps", self.steps, limit.steps)?;
        within("tokens", self.tokens, limit.tokens)?;
        match (self.money, limit.money) {
            (None, _) => {}
            (Some(asked), Some(allowed))
                if asked.currency == allowed.currency
                    && asked.amount_minor <= allowed.amount_minor => {}
            (asked, allowed) => {
                return Err(BudgetExcess {
                    dimension: "money",
                    asked: money_text(asked),
                    allowed: money_text(allowed),
                });
            }
        }
        if self.deadline > limit.deadline {
            return Err(BudgetExcess {
                dimension: "deadline",
                asked: self.deadline.to_rfc3339(),
                allowed: limit.deadline.to_rfc3339(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use domain::Currency;

    fn budget(calls: u32, money: Option<i64>, deadline_hour: u32) -> Budget {
        Budget {
            model_calls: calls,
            steps: 10,
            tokens: 10_000,
            money: money.map(|m| Money::new(m, Currency::EUR)),
            deadline: Utc
                .with_ymd_and_hms(2026, 12, 2, deadline_hour, 0, 0)
                .unwrap(),
        }
    }

    #[test]
    fn a_child_asking_no_more_than_its_parent_in_any_dimension_fits() {
        assert_eq!(
            budget(5, Some(100), 10).fits_within(&budget(5, Some(100), 10)),
            Ok(())
        );
        assert_eq!(
            budget(1, None, 9).fits_within(&budget(5, Some(100), 10)),
            Ok(())
        );
    }

    #[test]
    fn a_child_asking_more_model_calls_than_remain_is_told_which_and_how_many() {
        let excess = budget(6, None, 10)
            .fits_within(&budget(5, None, 10))
            .unwrap_err();
        assert_eq!(excess.to_string(), "model_calls asked 6 but only 5 remains");
    }

    #[test]
    fn a_child_may_not_move_money_its_parent_could_not_or_in_another_currency() {
        let excess = budget(1, Some(1), 10)
            .fits_within(&budget(1, None, 10))
            .unwrap_err();
        assert_eq!(excess.dimension, "money");
        let mut usd = budget(1, None, 10);
        usd.money = Some(Money::new(50, Currency::USD));
        let excess = usd.fits_within(&budget(1, Some(100), 10)).unwrap_err();
        assert_eq!(excess.dimension, "money");
        let excess = budget(1, Some(101), 10)
            .fits_within(&budget(1, Some(100), 10))
            .unwrap_err();
        assert_eq!(excess.dimension, "money");
    }

    #[test]
    fn what_remains_after_spending_is_the_budget_less_what_was_spent_in_every_dimension() {
        let spent = Spent {
            model_calls: 2,
            steps: 3,
            tokens: 500,
            money: Some(Money::new(40, Currency::EUR)),
        };
        let left = budget(5, Some(100), 10).after(&spent).unwrap();
        assert_eq!((left.model_calls, left.steps, left.tokens), (3, 7, 9_500));
        assert_eq!(left.money, Some(Money::new(60, Currency::EUR)));
        assert_eq!(left.deadline, budget(5, Some(100), 10).deadline);
    }

    #[test]
    fn spending_more_than_the_budget_in_any_dimension_is_an_overspend_named_by_its_dimension() {
        let steps = Spent {
            steps: 11,
            ..Spent::default()
        };
        let excess = budget(5, None, 10).after(&steps).unwrap_err();
        assert_eq!(excess.to_string(), "steps asked 11 but only 10 remains");
        let money = Spent {
            money: Some(Money::new(1, Currency::EUR)),
            ..Spent::default()
        };
        assert_eq!(
            budget(5, None, 10).after(&money).unwrap_err().dimension,
            "money"
        );
    }

    #[test]
    fn spending_adds_up_across_a_chain_but_never_across_two_currencies() {
        let total = Spent::one_step().plus(&Spent::one_step()).unwrap();
        assert_eq!(total.steps, 2);
        let eur = Spent {
            money: Some(Money::new(5, Currency::EUR)),
            ..Spent::default()
        };
        let usd = Spent {
            money: Some(Money::new(5, Currency::USD)),
            ..Spent::default()
        };
        assert_eq!(
            eur.plus(&eur).unwrap().money,
            Some(Money::new(10, Currency::EUR))
        );
        assert_eq!(eur.plus(&usd).unwrap_err().dimension, "money");
    }

    #[test]
    fn a_child_may_not_outlive_its_parents_deadline() {
        let excess = budget(1, None, 11)
            .fits_within(&budget(1, None, 10))
            .unwrap_err();
        assert_eq!(excess.dimension, "deadline");
    }
}
