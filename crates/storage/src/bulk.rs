//! Multi-row inserts that keep one statement text whatever the number of
//! rows.
//!
//! A batch writes its rows with one statement per table. Built as
//! `VALUES (…), (…)`, that statement has a different text for every batch
//! size: PostgreSQL parses and plans each text again, and every connection's
//! statement cache (sqlx keeps 100) churns through the copies, each one
//! another round trip to prepare. On PostgreSQL the rows therefore travel as
//! one JSON array, unpacked by `json_to_recordset` in the order given, so a
//! table has one insert statement and it is prepared once per connection.
//! SQLite prepares statements in-process, cheaply, and keeps sea-orm's
//! `insert_many`.

use crate::error::StorageError;
use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ColumnType, ConnectionTrait, DbBackend, EntityName, EntityTrait,
    Iden, IntoActiveModel, Iterable, PrimaryKeyToColumn, PrimaryKeyTrait, Statement,
    TryInsertResult, Value,
};

/// What to do with a row whose key is already stored.
pub(crate) enum Conflict<C> {
    /// Fail the statement (and with it the transaction).
    Fail,
    /// Keep the stored row and skip this one.
    Skip(C),
    /// Overwrite these columns of the stored row.
    Update(C, Vec<C>),
}

/// Inserts `rows` (all giving a value for the same columns; those left
/// `NotSet`, such as an auto-increment key, are left to the database) in
/// one statement.
///
/// # Errors
/// Database failures, or a column type this module cannot carry.
pub(crate) async fn insert_all<A>(
    db: &impl ConnectionTrait,
    rows: Vec<A>,
    conflict: Conflict<<A::Entity as EntityTrait>::Column>,
) -> Result<(), StorageError>
where
    A: ActiveModelTrait + Send,
    <A::Entity as EntityTrait>::Model: IntoActiveModel<A>,
{
    if rows.is_empty() {
        return Ok(());
    }
    match db.get_database_backend() {
        DbBackend::Postgres => {
            db.execute(postgres_insert(&rows, &conflict, None)?).await?;
        }
        _ => {
            let insert = <A::Entity as EntityTrait>::insert_many(rows);
            match sqlite_conflict(&conflict) {
                None => {
                    insert.exec_without_returning(db).await?;
                }
                // `do_nothing` only tells sea-orm that no row inserted is
                // not an error.
                Some(on_conflict) => {
                    insert
                        .on_conflict(on_conflict)
                        .do_nothing()
                        .exec_without_returning(db)
                        .await?;
                }
            }
        }
    }
    Ok(())
}

/// Inserts `rows`, skipping those whose primary key (one string column) is
/// already stored, and returns the keys inserted now.
///
/// # Errors
/// Database failures, or a column type this module cannot carry.
pub(crate) async fn insert_new<A>(
    db: &impl ConnectionTrait,
    rows: Vec<A>,
) -> Result<Vec<String>, StorageError>
where
    A: ActiveModelTrait + Send,
    <A::Entity as EntityTrait>::Model: IntoActiveModel<A>,
    <<A::Entity as EntityTrait>::PrimaryKey as PrimaryKeyTrait>::ValueType: Into<String>,
{
    let Some(key) = <A::Entity as EntityTrait>::PrimaryKey::iter()
        .next()
        .map(PrimaryKeyToColumn::into_column)
    else {
        return Err(StorageError::Corrupt(
            "a table without a primary key".into(),
        ));
    };
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    match db.get_database_backend() {
        DbBackend::Postgres => {
            let statement = postgres_insert(&rows, &Conflict::Skip(key), Some(key))?;
            db.query_all(statement)
                .await?
                .iter()
                .map(|row| Ok(row.try_get_by_index::<String>(0)?))
                .collect()
        }
        _ => {
            let inserted = <A::Entity as EntityTrait>::insert_many(rows)
                .on_conflict(OnConflict::column(key).do_nothing().to_owned())
                .do_nothing()
                .exec_with_returning_keys(db)
                .await?;
            Ok(match inserted {
                TryInsertResult::Inserted(keys) => keys.into_iter().map(Into::into).collect(),
                TryInsertResult::Conflicted | TryInsertResult::Empty => Vec::new(),
            })
        }
    }
}

fn sqlite_conflict<C: ColumnTrait>(conflict: &Conflict<C>) -> Option<OnConflict> {
    match conflict {
        Conflict::Fail => None,
        Conflict::Skip(key) => Some(OnConflict::column(*key).do_nothing().to_owned()),
        Conflict::Update(key, columns) => Some(
            OnConflict::column(*key)
                .update_columns(columns.iter().copied())
                .to_owned(),
        ),
    }
}

/// `INSERT … SELECT … FROM json_to_recordset($1) … ORDER BY` the rows'
/// order, with the conflict clause and an optional returned column.
fn postgres_insert<A: ActiveModelTrait>(
    rows: &[A],
    conflict: &Conflict<<A::Entity as EntityTrait>::Column>,
    returning: Option<<A::Entity as EntityTrait>::Column>,
) -> Result<Statement, StorageError> {
    let columns: Vec<_> = <A::Entity as EntityTrait>::Column::iter()
        .filter(|column| !rows[0].get(*column).is_not_set())
        .collect();
    let keys: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let mut json = JsonRows::new();
    for row in rows {
        json.row();
        for (column, key) in columns.iter().zip(&keys) {
            let value = row.get(*column).into_value().ok_or_else(|| {
                StorageError::Corrupt(format!(
                    "row without a value for {key} in a multi-row insert"
                ))
            })?;
            json.value(key, &value)?;
        }
    }
    let names: Vec<String> = columns.iter().map(|c| quoted(*c)).collect();
    let typed = columns
        .iter()
        .map(|c| {
            Ok(format!(
                "{} {}",
                quoted(*c),
                postgres_type(c.def().get_column_type())?
            ))
        })
        .collect::<Result<Vec<_>, StorageError>>()?;
    let on_conflict = match conflict {
        Conflict::Fail => String::new(),
        Conflict::Skip(key) => format!(" ON CONFLICT ({}) DO NOTHING", quoted(*key)),
        Conflict::Update(key, updated) => format!(
            " ON CONFLICT ({}) DO UPDATE SET {}",
            quoted(*key),
            updated
                .iter()
                .map(|c| format!("{0} = EXCLUDED.{0}", quoted(*c)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let returning = returning.map_or(String::new(), |c| format!(" RETURNING {}", quoted(c)));
    let sql = format!(
        "INSERT INTO \"{table}\" ({names}) SELECT {names} FROM ROWS FROM \
         (json_to_recordset($1::json) AS ({typed})) WITH ORDINALITY AS r({names}, row_order) \
         ORDER BY row_order{on_conflict}{returning}",
        table = <A::Entity as Default>::default().table_name(),
        names = names.join(", "),
        typed = typed.join(", "),
    );
    Ok(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        [json.finish()?],
    ))
}

/// The one parameter `json_to_recordset($1::json)` reads: rows written
/// straight into JSON text, field by field, rather than built as
/// `serde_json::Value` maps first and then printed (a batch's rows were a
/// tenth of the engine's CPU that way).
pub(crate) struct JsonRows {
    text: Vec<u8>,
    rows: usize,
    fields: usize,
}

impl JsonRows {
    pub(crate) fn new() -> Self {
        JsonRows {
            text: b"[".to_vec(),
            rows: 0,
            fields: 0,
        }
    }

    /// Starts the next row.
    pub(crate) fn row(&mut self) {
        if self.rows > 0 {
            self.text.extend_from_slice(b"},");
        }
        self.text.push(b'{');
        self.rows += 1;
        self.fields = 0;
    }

    /// Adds a field to the current row.
    ///
    /// # Errors
    /// A value JSON cannot carry.
    pub(crate) fn field<T: serde::Serialize + ?Sized>(
        &mut self,
        name: &str,
        value: &T,
    ) -> Result<(), StorageError> {
        if self.fields > 0 {
            self.text.push(b',');
        }
        self.fields += 1;
        serde_json::to_writer(&mut self.text, name).map_err(unwritable)?;
        self.text.push(b':');
        serde_json::to_writer(&mut self.text, value).map_err(unwritable)
    }

    /// Adds a column's value to the current row, as `json_to_recordset`
    /// reads it back into that column's type.
    ///
    /// # Errors
    /// A value of a type this module cannot carry.
    fn value(&mut self, name: &str, value: &Value) -> Result<(), StorageError> {
        match value {
            Value::String(text) => self.field(name, &text.as_deref()),
            Value::BigInt(number) => self.field(name, number),
            Value::Int(number) => self.field(name, number),
            Value::Bool(flag) => self.field(name, flag),
            Value::ChronoDateTimeUtc(at) => self.field(name, &at.as_deref().map(json_time)),
            other => Err(StorageError::Corrupt(format!(
                "multi-row insert cannot carry {other:?}"
            ))),
        }
    }

    /// The rows as the statement's parameter.
    ///
    /// # Errors
    /// Never in practice: everything written is UTF-8 JSON.
    pub(crate) fn finish(mut self) -> Result<Value, StorageError> {
        if self.rows > 0 {
            self.text.push(b'}');
        }
        self.text.push(b']');
        let text = String::from_utf8(self.text)
            .map_err(|e| StorageError::Corrupt(format!("rows are not UTF-8: {e}")))?;
        Ok(Value::from(text))
    }
}

fn unwritable(error: serde_json::Error) -> StorageError {
    StorageError::Corrupt(format!("a row could not be written as JSON: {error}"))
}

fn quoted(iden: impl Iden) -> String {
    format!("\"{}\"", iden.to_string())
}

/// The PostgreSQL type `json_to_recordset` reads a column as (the insert
/// then assigns it to the column's own type, e.g. `varchar(64)`).
fn postgres_type(column_type: &ColumnType) -> Result<&'static str, StorageError> {
    Ok(match column_type {
        ColumnType::String(_) | ColumnType::Text | ColumnType::Char(_) => "text",
        ColumnType::BigInteger => "bigint",
        ColumnType::Integer => "integer",
        ColumnType::Boolean => "boolean",
        ColumnType::TimestampWithTimeZone => "timestamptz",
        other => {
            return Err(StorageError::Corrupt(format!(
                "multi-row insert cannot carry a {other:?} column"
            )));
        }
    })
}

/// A time as `json_to_recordset` reads it into a `timestamptz`: RFC 3339
/// with microseconds, what PostgreSQL stores, truncated as the binary
/// protocol truncates.
pub(crate) fn json_time(at: &DateTime<Utc>) -> String {
    at.trunc_subsecs(6)
        .to_rfc3339_opts(SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entities::journal_stream;
    use chrono::TimeZone;
    use sea_orm::Set;

    fn head(stream: &str, dirty: bool) -> journal_stream::ActiveModel {
        journal_stream::ActiveModel {
            stream: Set(stream.to_owned()),
            length: Set(3),
            head_hash: Set("abc".to_owned()),
            dirty: Set(dirty),
            updated_at: Set(Utc.timestamp_opt(1_796_000_000, 123_456_789).unwrap()),
        }
    }

    fn insert_of(rows: usize) -> Statement {
        let rows: Vec<_> = (0..rows)
            .map(|n| head(&format!("prp_{n}"), n % 2 == 0))
            .collect();
        let conflict = Conflict::Update(
            journal_stream::Column::Stream,
            vec![journal_stream::Column::Length],
        );
        postgres_insert(&rows, &conflict, None).unwrap()
    }

    #[test]
    fn a_multi_row_insert_is_one_statement_text_on_postgresql_whatever_the_number_of_rows() {
        let (one, forty) = (insert_of(1), insert_of(40));
        assert_eq!(one.sql, forty.sql);
        assert!(
            one.sql.contains("json_to_recordset($1::json)"),
            "{}",
            one.sql
        );
        assert!(
            one.sql.contains(
                "ON CONFLICT (\"stream\") DO UPDATE SET \"length\" = EXCLUDED.\"length\""
            ),
            "{}",
            one.sql
        );
        assert_eq!(forty.values.map(|v| v.0.len()), Some(1), "one parameter");
    }

    #[test]
    fn rows_written_field_by_field_read_back_as_the_values_given() {
        let mut json = JsonRows::new();
        json.row();
        json.value("text", &Value::from("a \"quoted\" \\ line\nwith ✓"))
            .unwrap();
        json.value("missing", &Value::String(None)).unwrap();
        json.value("count", &Value::BigInt(Some(-7))).unwrap();
        json.row();
        json.field("flag", &true).unwrap();
        let Value::String(Some(text)) = json.finish().unwrap() else {
            panic!("the rows are one text parameter");
        };
        let rows: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            rows,
            serde_json::json!([
                { "text": "a \"quoted\" \\ line\nwith ✓", "missing": null, "count": -7 },
                { "flag": true }
            ])
        );
    }

    #[test]
    fn no_rows_are_an_empty_json_array() {
        let Value::String(Some(text)) = JsonRows::new().finish().unwrap() else {
            panic!("the rows are one text parameter");
        };
        assert_eq!(*text, "[]");
    }

    #[test]
    fn rows_travel_in_order_with_times_in_microseconds() {
        let statement = insert_of(2);
        let Some(Value::String(Some(json))) = statement.values.and_then(|v| v.0.first().cloned())
        else {
            panic!("the rows travel as one text parameter");
        };
        let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(rows[0]["stream"], "prp_0");
        assert_eq!(rows[1]["stream"], "prp_1");
        assert_eq!(rows[1]["dirty"], false);
        assert_eq!(rows[0]["updated_at"], "2026-11-30T00:53:20.123456Z");
        assert!(statement.sql.contains("ORDER BY row_order"));
    }
}
