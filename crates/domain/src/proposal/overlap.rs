//! One live proposal per order and request: a new proposal that overlaps a
//! live one must say which one it replaces. Pure, so the rule is tested
//! without a database; the submit use case feeds it the order's live
//! proposals read in its own transaction.

use super::ProposalStatus;

/// A proposal still in flight on the order, as the rule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveClaim<'a> {
    pub id: &'a str,
    pub status: ProposalStatus,
    /// The order lines (SKUs) it refunds; empty: the whole order.
    pub lines: &'a [String],
    pub amount_minor: i64,
}

impl LiveClaim<'_> {
    /// Whether the claim still counts against the order: not final, and its
    /// refund not yet booked on the order (a succeeded refund is booked and
    /// already lowers what is left).
    pub fn counts(&self) -> bool {
        !self.status.is_terminal() && self.status != ProposalStatus::Succeeded
    }
}

/// The live proposals (ids, in the order given) that a new proposal for
/// `lines` and `amount_minor` overlaps, ignoring `replaces`: those refunding
/// a line it refunds (no lines named means every line), or every one of
/// them when together they would refund more than `left_minor`, what is
/// left to refund on the order.
pub fn overlapping<'a>(
    lines: &[String],
    amount_minor: i64,
    left_minor: i64,
    live: &[LiveClaim<'a>],
    replaces: Option<&str>,
) -> Vec<&'a str> {
    let others: Vec<&LiveClaim<'a>> = live
        .iter()
        .filter(|claim| claim.counts() && Some(claim.id) != replaces)
        .collect();
    let together = others.iter().fold(amount_minor, |sum, claim| {
        sum.saturating_add(claim.amount_minor)
    });
    others
        .into_iter()
        .filter(|claim| together > left_minor || share_a_line(lines, claim.lines))
        .map(|claim| claim.id)
        .collect()
}

fn share_a_line(a: &[String], b: &[String]) -> bool {
    a.is_empty() || b.is_empty() || a.iter().any(|line| b.contains(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(skus: &[&str]) -> Vec<String> {
        skus.iter().map(|s| (*s).to_owned()).collect()
    }

    fn awaiting<'a>(id: &'a str, lines: &'a [String], amount_minor: i64) -> LiveClaim<'a> {
        LiveClaim {
            id,
            status: ProposalStatus::AwaitingApproval,
            lines,
            amount_minor,
        }
    }

    #[test]
    fn a_second_whole_order_refund_overlaps_the_live_one() {
        let none = Vec::new();
        let live = [awaiting("prp_1", &none, 5020)];
        assert_eq!(overlapping(&none, 5020, 5020, &live, None), vec!["prp_1"]);
    }

    #[test]
    fn naming_the_live_proposal_as_replaced_clears_the_overlap() {
        let none = Vec::new();
        let live = [awaiting("prp_1", &none, 5020)];
        assert!(overlapping(&none, 5020, 5020, &live, Some("prp_1")).is_empty());
    }

    #[test]
    fn different_lines_that_fit_what_is_left_coexist() {
        let mug = lines(&["MUG"]);
        let plate = lines(&["PLATE"]);
        let live = [awaiting("prp_1", &mug, 1200)];
        assert!(overlapping(&plate, 3000, 5020, &live, None).is_empty());
    }

    #[test]
    fn the_same_line_twice_overlaps_even_when_the_money_fits() {
        let mug = lines(&["MUG", "SPOON"]);
        let mug_again = lines(&["MUG"]);
        let live = [awaiting("prp_1", &mug, 1200)];
        assert_eq!(
            overlapping(&mug_again, 1200, 5020, &live, None),
            vec!["prp_1"]
        );
    }

    #[test]
    fn different_lines_that_together_exceed_what_is_left_overlap() {
        let mug = lines(&["MUG"]);
        let plate = lines(&["PLATE"]);
        let live = [awaiting("prp_1", &mug, 3000)];
        assert_eq!(overlapping(&plate, 3000, 5020, &live, None), vec!["prp_1"]);
    }

    #[test]
    fn final_and_booked_proposals_do_not_count() {
        let none = Vec::new();
        let mut rejected = awaiting("prp_1", &none, 5020);
        rejected.status = ProposalStatus::Rejected;
        let mut booked = awaiting("prp_2", &none, 1000);
        booked.status = ProposalStatus::Succeeded;
        assert!(overlapping(&none, 4020, 4020, &[rejected, booked], None).is_empty());
    }
}
