//! What an admin sees before a policy version goes live: the text in force
//! against the text about to replace it, line by line with context, and the
//! citable sections the new text has. Publishing names the version that was
//! reviewed, so a version someone else published meanwhile is never
//! overwritten unseen.

use super::sections::split_sections;
use similar::{ChangeTag, TextDiff};

/// Unchanged lines shown around each change.
const CONTEXT_LINES: usize = 3;

/// One line of the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Kept(String),
    Added(String),
    Removed(String),
}

/// A run of changed lines with their context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffHunk {
    /// 1-based first line of the hunk in the text in force and in the new text.
    pub old_start: usize,
    pub new_start: usize,
    pub lines: Vec<DiffLine>,
}

/// The review of a policy text against the version in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyReview {
    /// The version in force (content hash) and its title; `None` for a new
    /// policy.
    pub current: Option<(String, String)>,
    /// The same text and title as the version in force: publishing would
    /// change nothing.
    pub unchanged: bool,
    pub hunks: Vec<DiffHunk>,
    pub added_lines: usize,
    pub removed_lines: usize,
    /// The headings agents will cite, as the new text has them.
    pub sections: Vec<String>,
}

/// Compares `body` with the text in force (`current`: version, title, text).
pub fn review(current: Option<(&str, &str, &str)>, title: &str, body: &str) -> PolicyReview {
    let old = current.map_or("", |(_, _, text)| text);
    let diff = TextDiff::from_lines(old, body);
    let mut added_lines = 0;
    let mut removed_lines = 0;
    let hunks = diff
        .grouped_ops(CONTEXT_LINES)
        .into_iter()
        .filter_map(|group| {
            let first = group.first()?;
            let lines = group
                .iter()
                .flat_map(|op| diff.iter_changes(op))
                .map(|change| {
                    let text = change.value().trim_end_matches(['\n', '\r']).to_owned();
                    match change.tag() {
                        ChangeTag::Equal => DiffLine::Kept(text),
                        ChangeTag::Insert => {
                            added_lines += 1;
                            DiffLine::Added(text)
                        }
                        ChangeTag::Delete => {
                            removed_lines += 1;
                            DiffLine::Removed(text)
                        }
                    }
                })
                .collect();
            Some(DiffHunk {
                old_start: first.old_range().start + 1,
                new_start: first.new_range().start + 1,
                lines,
            })
        })
        .collect();
    let sections = split_sections(body)
        .into_iter()
        .filter(|s| !s.heading.is_empty())
        .map(|s| s.heading)
        .collect();
    PolicyReview {
        unchanged: current
            .is_some_and(|(_, old_title, text)| text == body && old_title == title.trim()),
        current: current.map(|(version, old_title, _)| (version.to_owned(), old_title.to_owned())),
        hunks,
        added_lines,
        removed_lines,
        sections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IN_FORCE: &str = "# Returns\n\n## 1. Window\n\nReturns within 30 days.\n\n## 2. Condition\n\nUnopened items only.\n";

    #[test]
    fn a_changed_sentence_shows_as_the_line_removed_and_the_line_added_with_context() {
        let new = IN_FORCE.replace("30 days", "45 days");
        let review = review(Some(("abc", "Returns", IN_FORCE)), "Returns", &new);
        assert!(!review.unchanged);
        assert_eq!((review.added_lines, review.removed_lines), (1, 1));
        assert_eq!(review.hunks.len(), 1);
        let lines = &review.hunks[0].lines;
        assert!(lines.contains(&DiffLine::Removed("Returns within 30 days.".into())));
        assert!(lines.contains(&DiffLine::Added("Returns within 45 days.".into())));
        assert!(
            lines.contains(&DiffLine::Kept("## 1. Window".into())),
            "context: {lines:?}"
        );
        assert_eq!(review.sections, ["1. Window", "2. Condition"]);
    }

    #[test]
    fn the_same_text_and_title_again_would_change_nothing() {
        let review = review(Some(("abc", "Returns", IN_FORCE)), "Returns", IN_FORCE);
        assert!(review.unchanged);
        assert!(review.hunks.is_empty());
        let retitled = super::review(
            Some(("abc", "Returns", IN_FORCE)),
            "Returns (2027)",
            IN_FORCE,
        );
        assert!(!retitled.unchanged, "a new title is a new version");
    }

    #[test]
    fn a_new_policy_is_all_added_lines() {
        let review = review(None, "Returns", IN_FORCE);
        assert_eq!(review.current, None);
        assert_eq!(review.removed_lines, 0);
        assert_eq!(review.added_lines, IN_FORCE.lines().count());
    }
}
