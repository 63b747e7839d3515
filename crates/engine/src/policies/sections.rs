//! Splitting a Markdown policy into citable sections.
//!
//! `# Title` names the document; each `##` heading starts a section. A heading
//! numbered like `## 3. Unopened items` becomes `section-3` (the reference the
//! brief cites as `returns-policy:section-3`); others become a slug of their
//! text. Text before the first section is `intro`. Fenced code is kept as text.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// `section-3`, `intro`, `section-lost-parcels`.
    pub id: String,
    /// The heading as written, without the hashes (`3. Unopened items`).
    pub heading: String,
    /// The section's text, trimmed.
    pub text: String,
}

pub fn split_sections(markdown: &str) -> Vec<Section> {
    let mut sections = Vec::new();
    let mut current = Section {
        id: "intro".to_owned(),
        heading: String::new(),
        text: String::new(),
    };
    let mut in_fence = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        let is_heading = !in_fence && (1..=3).contains(&level) && trimmed[level..].starts_with(' ');
        if is_heading && level == 1 {
            continue; // the document title
        }
        if is_heading && level == 2 {
            push(&mut sections, current);
            let heading = trimmed[level..].trim().to_owned();
            current = Section {
                id: section_id(&heading),
                heading,
                text: String::new(),
            };
            continue;
        }
        current.text.push_str(line);
        current.text.push('\n');
    }
    push(&mut sections, current);
    dedupe_ids(&mut sections);
    sections
}

fn push(sections: &mut Vec<Section>, mut section: Section) {
    section.text = section.text.trim().to_owned();
    if !section.text.is_empty() || !section.heading.is_empty() {
        sections.push(section);
    }
}

/// `3. Unopened items` → `section-3`; `Lost parcels` → `section-lost-parcels`.
pub fn section_id(heading: &str) -> String {
    let number: String = heading
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let number = number.trim_end_matches('.');
    if !number.is_empty() {
        return format!("section-{}", number.replace('.', "-"));
    }
    let slug: Vec<String> = heading
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!("section-{}", slug.join("-"))
}

fn dedupe_ids(sections: &mut [Section]) {
    let mut seen = std::collections::HashMap::<String, u32>::new();
    for section in sections.iter_mut() {
        let count = seen.entry(section.id.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            section.id = format!("{}-{}", section.id, count);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = "# Returns\n\nIntro text.\n\n## 3. Unopened items\n\nWithin 30 days.\n\n```\n## not a heading\n```\n\n## Lost parcels\n\nReplaced.\n";

    #[test]
    fn numbered_headings_become_section_numbers() {
        let sections = split_sections(POLICY);
        let ids: Vec<&str> = sections.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["intro", "section-3", "section-lost-parcels"]);
        assert_eq!(sections[1].heading, "3. Unopened items");
    }

    #[test]
    fn headings_inside_code_fences_are_text() {
        let sections = split_sections(POLICY);
        assert!(sections[1].text.contains("## not a heading"));
    }

    #[test]
    fn repeated_headings_get_distinct_ids() {
        let sections = split_sections("## Notes\na\n## Notes\nb\n");
        assert_eq!(sections[0].id, "section-notes");
        assert_eq!(sections[1].id, "section-notes-2");
    }
}
