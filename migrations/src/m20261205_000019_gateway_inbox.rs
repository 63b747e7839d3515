//! The gateway's inbox: every task another agent group sent here and this
//! group accepted, keyed by (sender group, task key) so a resend after a lost
//! acknowledgement finds the task it already created, and by (sender group,
//! nonce) so a replayed envelope is recognised for as long as the task is
//! kept, not only within the replay window.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_000019_gateway_inbox"
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum GatewayInbox {
    Table,
    /// Opaque (`gtk_…`): the A2A task id the sender is given.
    Id,
    SenderGroup,
    TaskKey,
    Nonce,
    RootKey,
    ParentKey,
    Kind,
    /// The signed envelope exactly as received (JSON): the evidence.
    Envelope,
    /// SHA-256 of the envelope's canonical form: a resend carries the same.
    EnvelopeDigest,
    /// The A2A task state: `submitted`, `working`, `input-required`,
    /// `completed`, `failed` or `canceled`.
    State,
    StateVersion,
    /// The task's result (JSON) once completed.
    Result,
    /// When the sender created the envelope.
    CreatedAt,
    ReceivedAt,
    UpdatedAt,
}

const BY_KEY: &str = "idx_gateway_inbox_sender_task_key";
const BY_NONCE: &str = "idx_gateway_inbox_sender_nonce";
const BY_ROOT: &str = "idx_gateway_inbox_root_key";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GatewayInbox::Table)
                    .col(id(GatewayInbox::Id).primary_key())
                    .col(
                        ColumnDef::new(GatewayInbox::SenderGroup)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayInbox::TaskKey)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayInbox::Nonce)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayInbox::RootKey)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayInbox::ParentKey)
                            .string_len(128)
                            .null(),
                    )
                    .col(ColumnDef::new(GatewayInbox::Kind).string_len(64).not_null())
                    .col(ColumnDef::new(GatewayInbox::Envelope).text().not_null())
                    .col(
                        ColumnDef::new(GatewayInbox::EnvelopeDigest)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayInbox::State)
                            .string_len(24)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayInbox::StateVersion)
                            .integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(GatewayInbox::Result).text().null())
                    .col(utc(GatewayInbox::CreatedAt))
                    .col(utc(GatewayInbox::ReceivedAt))
                    .col(utc(GatewayInbox::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        for (name, columns, unique) in [
            (
                BY_KEY,
                [GatewayInbox::SenderGroup, GatewayInbox::TaskKey].as_slice(),
                true,
            ),
            (
                BY_NONCE,
                [GatewayInbox::SenderGroup, GatewayInbox::Nonce].as_slice(),
                true,
            ),
            (BY_ROOT, [GatewayInbox::RootKey].as_slice(), false),
        ] {
            let mut index = Index::create();
            index.name(name).table(GatewayInbox::Table);
            for column in columns {
                index.col(*column);
            }
            if unique {
                index.unique();
            }
            manager.create_index(index).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(GatewayInbox::Table).to_owned())
            .await
    }
}
