//! Filters on a set of keys that keep one statement text whatever the
//! number of keys.
//!
//! `col IN ($1, …, $n)` is a new statement for every n: PostgreSQL parses
//! and plans it again, and each connection's statement cache (sqlx keeps 100)
//! fills with copies that push out everything else. On PostgreSQL the keys
//! travel as one array, `col = ANY($1)`; SQLite prepares statements cheaply
//! in-process and keeps `IN`.

use sea_orm::sea_query::extension::postgres::PgFunc;
use sea_orm::sea_query::{Expr, SimpleExpr};
use sea_orm::{ColumnTrait, DbBackend};

/// `column` is one of `keys`.
pub(crate) fn one_of<C: ColumnTrait>(backend: DbBackend, column: C, keys: &[String]) -> SimpleExpr {
    match backend {
        DbBackend::Postgres => Expr::col(column).eq(PgFunc::any(Expr::val(keys.to_vec()))),
        _ => column.is_in(keys.iter().cloned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entities::proposal;
    use sea_orm::{EntityTrait, QueryFilter, QueryTrait};

    fn sql(backend: DbBackend, keys: usize) -> String {
        let keys: Vec<String> = (0..keys).map(|n| format!("prp_{n}")).collect();
        proposal::Entity::find()
            .filter(one_of(backend, proposal::Column::Id, &keys))
            .build(backend)
            .sql
    }

    #[test]
    fn a_key_set_is_one_statement_text_on_postgresql_whatever_its_size() {
        assert_eq!(sql(DbBackend::Postgres, 1), sql(DbBackend::Postgres, 40));
        assert!(sql(DbBackend::Postgres, 3).contains("= ANY($1)"));
        assert_ne!(
            sql(DbBackend::Sqlite, 1),
            sql(DbBackend::Sqlite, 3),
            "SQLite keeps IN"
        );
    }
}
