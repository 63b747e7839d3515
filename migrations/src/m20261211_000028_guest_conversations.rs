//! Conversations a visitor starts before signing in. Conversations belong
//! to a user and are about a customer (both foreign keys to `users`), so a
//! visitor's conversation is held by one shared, disabled account that can
//! never sign in (its name is not a valid user name) and `guest_id` says
//! which visitor's it is. Signing in binds it: owner and customer become
//! the person who signed in. `sign_in_wait_until` is set while a turn waits
//! for that sign-in, so every replica's pages can ask for it.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::prelude::ChronoDateTimeUtc;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261211_000028_guest_conversations"
    }
}

/// Must match `storage::users::GUEST_ACCOUNT_ID`.
const GUEST_ACCOUNT_ID: &str = "usr_visitors_not_signed_in";

#[derive(DeriveIden)]
enum Conversations {
    Table,
    GuestId,
    SignInWaitUntil,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    Name,
    DisplayName,
    PasswordHash,
    SessionEpoch,
    DisabledAt,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let created = ChronoDateTimeUtc::from_timestamp(1_796_083_200, 0)
            .ok_or_else(|| DbErr::Custom("the guest account's creation time".into()))?;
        manager
            .exec_stmt(
                Query::insert()
                    .into_table(Users::Table)
                    .columns([
                        Users::Id,
                        Users::Name,
                        Users::DisplayName,
                        Users::PasswordHash,
                        Users::SessionEpoch,
                        Users::DisabledAt,
                        Users::CreatedAt,
                    ])
                    .values_panic([
                        GUEST_ACCOUNT_ID.into(),
                        "~visitors".into(),
                        "Visitor (not signed in)".into(),
                        // Not a password hash: nothing verifies against it.
                        "!".into(),
                        0_i64.into(),
                        created.into(),
                        created.into(),
                    ])
                    .to_owned(),
            )
            .await?;
        // One column per statement: SQLite adds one at a time.
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .add_column(ColumnDef::new(Conversations::GuestId).string_len(64).null())
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .add_column(
                        ColumnDef::new(Conversations::SignInWaitUntil)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_conversations_guest")
                    .table(Conversations::Table)
                    .col(Conversations::GuestId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_conversations_guest")
                    .table(Conversations::Table)
                    .to_owned(),
            )
            .await?;
        for column in [Conversations::SignInWaitUntil, Conversations::GuestId] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Conversations::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .exec_stmt(
                Query::delete()
                    .from_table(Users::Table)
                    .and_where(Expr::col(Users::Id).eq(GUEST_ACCOUNT_ID))
                    .to_owned(),
            )
            .await
    }
}
