//! The sending side of the gateway: the outbox (every task this group sends
//! another, written with its journal event and the work item that relays
//! it, so a task exists before any attempt to deliver it and survives a
//! crash between the commit and the send), where each peer group is
//! reached, and the inbox's status message.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261206_000022_gateway_outbox"
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum GatewayOutbox {
    Table,
    /// Opaque (`gto_…`).
    Id,
    ToGroup,
    /// Unique within this group: a resend carries the same key, and the
    /// receiver recognises it.
    TaskKey,
    RootKey,
    ParentKey,
    Kind,
    /// What the task is for here (a conversation, a proposal), if anything.
    Subject,
    /// The signed envelope as sent (JSON), byte for byte on every resend.
    Envelope,
    /// `queued`, `delivered`, `working`, `completed`, `failed`, `refused`,
    /// `canceled` or `expired`.
    State,
    StateVersion,
    /// The peer's id for the task, once it acknowledged it.
    RemoteTaskId,
    /// The peer's result (JSON), checked against the kind's result schema.
    Result,
    /// The peer's signed answer as received (JSON), verified with its
    /// pinned key: the evidence that the result is the peer's.
    SignedAnswer,
    /// Why the task failed, was refused or expired, as the peer said it.
    Error,
    /// The budget's deadline: no answer is waited for after it.
    Deadline,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum GatewayPeers {
    Table,
    GroupName,
    /// The peer's A2A JSON-RPC endpoint.
    Url,
    UpdatedBy,
    UpdatedAt,
}

/// The inbox gains the sentence that goes with a task's state (why it
/// failed), sent to its sender as the A2A status message, and the answer
/// this group signed.
#[derive(DeriveIden, Clone, Copy)]
enum GatewayInbox {
    Table,
    StatusMessage,
    SignedAnswer,
}

const BY_TASK_KEY: &str = "idx_gateway_outbox_task_key";
const BY_SUBJECT: &str = "idx_gateway_outbox_subject";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let text = |column: GatewayOutbox, len: u32| {
            ColumnDef::new(column).string_len(len).not_null().to_owned()
        };
        let optional = |column: GatewayOutbox, len: u32| {
            ColumnDef::new(column).string_len(len).null().to_owned()
        };
        manager
            .create_table(
                Table::create()
                    .table(GatewayOutbox::Table)
                    .col(id(GatewayOutbox::Id).primary_key())
                    .col(text(GatewayOutbox::ToGroup, 63))
                    .col(text(GatewayOutbox::TaskKey, 128))
                    .col(text(GatewayOutbox::RootKey, 128))
                    .col(optional(GatewayOutbox::ParentKey, 128))
                    .col(text(GatewayOutbox::Kind, 64))
                    .col(optional(GatewayOutbox::Subject, 64))
                    .col(ColumnDef::new(GatewayOutbox::Envelope).text().not_null())
                    .col(text(GatewayOutbox::State, 24))
                    .col(
                        ColumnDef::new(GatewayOutbox::StateVersion)
                            .integer()
                            .not_null(),
                    )
                    .col(optional(GatewayOutbox::RemoteTaskId, 128))
                    .col(ColumnDef::new(GatewayOutbox::Result).text().null())
                    .col(ColumnDef::new(GatewayOutbox::SignedAnswer).text().null())
                    .col(ColumnDef::new(GatewayOutbox::Error).text().null())
                    .col(utc(GatewayOutbox::Deadline))
                    .col(utc(GatewayOutbox::CreatedAt))
                    .col(utc(GatewayOutbox::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(BY_TASK_KEY)
                    .table(GatewayOutbox::Table)
                    .col(GatewayOutbox::TaskKey)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(BY_SUBJECT)
                    .table(GatewayOutbox::Table)
                    .col(GatewayOutbox::Subject)
                    .to_owned(),
            )
            .await?;
        // One column per statement: SQLite alters one at a time.
        for column in [GatewayInbox::StatusMessage, GatewayInbox::SignedAnswer] {
            manager
                .alter_table(
                    Table::alter()
                        .table(GatewayInbox::Table)
                        .add_column(ColumnDef::new(column).text().null())
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(GatewayPeers::Table)
                    .col(
                        ColumnDef::new(GatewayPeers::GroupName)
                            .string_len(63)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(GatewayPeers::Url).text().not_null())
                    .col(
                        ColumnDef::new(GatewayPeers::UpdatedBy)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(utc(GatewayPeers::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [GatewayInbox::SignedAnswer, GatewayInbox::StatusMessage] {
            manager
                .alter_table(
                    Table::alter()
                        .table(GatewayInbox::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_table(Table::drop().table(GatewayPeers::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(GatewayOutbox::Table).to_owned())
            .await
    }
}
