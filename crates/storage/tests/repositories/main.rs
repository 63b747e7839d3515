//! Repository tests. They run on SQLite by default and on PostgreSQL when
//! `TEST_DATABASE_URL` is set; every test gets its own database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod gateway_inbox;
mod gateway_outbox;
mod gateway_trust;
mod migrations;
mod orders;
mod policies;
mod resource_leases;
mod review_queue;
mod shop_orders;
mod sqlite_build;
mod throttle;
mod tokens;
mod transactions;
mod users;

use chrono::{DateTime, SubsecRound, Utc};
use domain::{Role, RoleSet};
use storage::Database;
use storage::users::NewUser;

/// Now, to the second: every backend stores it exactly, so round trips compare equal.
pub fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(0)
}

/// Inserts a user outside any transaction and returns its id.
pub async fn add_user(db: &Database, name: &str, roles: &[Role]) -> String {
    let id = storage::ids::new_id("usr");
    storage::users::insert(
        db.conn(),
        NewUser {
            id: &id,
            name,
            display_name: &format!("{name} (display)"),
            password_hash: "$argon2id$not-a-real-hash",
            roles: &RoleSet::new(roles.iter().copied()),
            now: now(),
        },
    )
    .await
    .unwrap();
    id
}
