//! Full-text search over policy sections with tantivy (BM25). The index lives
//! in memory and is rebuilt from the database's current versions whenever a
//! policy is imported; results carry everything evidence needs to cite them.

use super::sections::split_sections;
use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, STORED, STRING, Schema, TEXT, TantivyDocument, Value};
use tantivy::{Index, IndexReader, doc};

/// One matching passage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyHit {
    /// `returns-policy:section-3`.
    pub reference: String,
    pub document_slug: String,
    pub document_title: String,
    pub section_id: String,
    pub section_heading: String,
    /// Content hash of the document version the passage comes from.
    pub version: String,
    pub passage: String,
    pub score: f32,
}

/// A document version to index.
pub struct IndexedDocument<'a> {
    pub slug: &'a str,
    pub title: &'a str,
    pub version: &'a str,
    pub body: &'a str,
}

#[derive(Debug, thiserror::Error)]
#[error("policy index: {0}")]
pub struct IndexError(String);

impl From<tantivy::TantivyError> for IndexError {
    fn from(e: tantivy::TantivyError) -> Self {
        IndexError(e.to_string())
    }
}

struct Fields {
    slug: Field,
    title: Field,
    section_id: Field,
    heading: Field,
    version: Field,
    body: Field,
}

pub struct PolicyIndex {
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl PolicyIndex {
    /// Indexes every section of the given documents.
    ///
    /// # Errors
    /// [`IndexError`] if tantivy fails (in memory, so only on a bug).
    pub fn build(documents: &[IndexedDocument<'_>]) -> Result<Self, IndexError> {
        let mut builder = Schema::builder();
        let fields = Fields {
            slug: builder.add_text_field("slug", STRING | STORED),
            title: builder.add_text_field("title", TEXT | STORED),
            section_id: builder.add_text_field("section_id", STRING | STORED),
            heading: builder.add_text_field("heading", TEXT | STORED),
            version: builder.add_text_field("version", STRING | STORED),
            body: builder.add_text_field("body", TEXT | STORED),
        };
        let index = Index::create_in_ram(builder.build());
        let mut writer = index.writer(15_000_000)?;
        for document in documents {
            for section in split_sections(document.body) {
                writer.add_document(doc!(
                    fields.slug => document.slug,
                    fields.title => document.title,
                    fields.section_id => section.id,
                    fields.heading => section.heading,
                    fields.version => document.version,
                    fields.body => section.text,
                ))?;
            }
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(PolicyIndex {
            index,
            reader,
            fields,
        })
    }

    /// The best `limit` passages for a free-text question. Query syntax
    /// errors in people's text are tolerated, never fatal.
    ///
    /// # Errors
    /// [`IndexError`] on a tantivy failure.
    pub fn search(&self, question: &str, limit: usize) -> Result<Vec<PolicyHit>, IndexError> {
        let mut parser = QueryParser::for_index(
            &self.index,
            vec![self.fields.heading, self.fields.body, self.fields.title],
        );
        parser.set_field_boost(self.fields.heading, 2.0);
        parser.set_field_boost(self.fields.title, 0.5);
        let cleaned: String = question
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c.is_whitespace() {
                    c
                } else {
                    ' '
                }
            })
            .collect();
        let (query, _errors) = parser.parse_query_lenient(&cleaned);
        let searcher = self.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(limit.max(1)))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let document: TantivyDocument = searcher.doc(address)?;
            let text = |field: Field| {
                document
                    .get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let slug = text(self.fields.slug);
            let section_id = text(self.fields.section_id);
            hits.push(PolicyHit {
                reference: format!("{slug}:{section_id}"),
                document_slug: slug,
                document_title: text(self.fields.title),
                section_id,
                section_heading: text(self.fields.heading),
                version: text(self.fields.version),
                passage: text(self.fields.body),
                score,
            });
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::{RETURNS_POLICY, SHIPPING_POLICY};

    fn index() -> PolicyIndex {
        let docs: Vec<IndexedDocument<'_>> = [RETURNS_POLICY, SHIPPING_POLICY]
            .iter()
            .map(|(slug, title, body)| IndexedDocument {
                slug,
                title,
                version: "v1",
                body,
            })
            .collect();
        PolicyIndex::build(&docs).unwrap()
    }

    #[test]
    fn a_question_about_unopened_returns_finds_section_three() {
        let hits = index().search("can I return an unopened item?", 3).unwrap();
        assert_eq!(hits[0].reference, "returns-policy:section-3");
        assert_eq!(hits[0].document_title, "Returns and refunds policy");
        assert_eq!(hits[0].section_heading, "3. Unopened items");
        assert!(hits[0].passage.contains("within 30 days"));
        assert_eq!(hits[0].version, "v1");
    }

    #[test]
    fn shipping_questions_find_the_shipping_policy() {
        let hits = index().search("how much does shipping cost", 1).unwrap();
        assert_eq!(hits[0].reference, "shipping-policy:section-2");
    }

    #[test]
    fn query_syntax_in_a_question_is_not_an_error() {
        assert!(index().search("refund: \"opened\" AND (", 3).is_ok());
    }

    #[test]
    fn nothing_matches_gibberish() {
        assert!(index().search("zzqxv", 3).unwrap().is_empty());
    }
}
