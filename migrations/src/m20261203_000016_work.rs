//! The work runner's table (everything that runs outside a request, as rows
//! committed with the state change that calls for them) and the alerts a
//! person must see (a broken journal, an unknown outcome whose idempotency
//! key is about to be forgotten by the provider).

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261203_000016_work"
    }
}

#[derive(DeriveIden)]
enum WorkItems {
    Table,
    Id,
    /// What to do (`refund.send`, `sweep.expiry`, …): picks the handler.
    Kind,
    /// Which lane runs it (bounded concurrency per lane).
    Lane,
    /// The proposal, conversation … it is about (for people and logs).
    Subject,
    /// The handler's input, JSON.
    Payload,
    /// `queued`, `running`, `done`, `dead`, `cancelled` or `resolved`.
    State,
    Attempts,
    MaxAttempts,
    /// Not before this time (a retry's backoff, a schedule's next run).
    RunAfter,
    /// A schedule: run again this many seconds after each run.
    EverySeconds,
    /// The worker holding it while `running`, and until when.
    LeaseOwner,
    LeaseUntil,
    LastError,
    /// What the last run of a schedule found (e.g. "journal intact").
    LastNote,
    LastRunAt,
    /// At most one unfinished item per key (a proposal's send, a schedule).
    DedupeKey,
    CreatedAt,
    UpdatedAt,
    FinishedAt,
}

#[derive(DeriveIden)]
enum Alerts {
    Table,
    Id,
    Kind,
    Subject,
    Message,
    /// At most one open alert per key; repeats count instead.
    DedupeKey,
    RaisedAt,
    LastRaisedAt,
    Repeats,
    AcknowledgedAt,
    AcknowledgedBy,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(WorkItems::Table)
                    .col(id(WorkItems::Id).primary_key())
                    .col(ColumnDef::new(WorkItems::Kind).string_len(64).not_null())
                    .col(ColumnDef::new(WorkItems::Lane).string_len(32).not_null())
                    .col(ColumnDef::new(WorkItems::Subject).string_len(64).null())
                    .col(ColumnDef::new(WorkItems::Payload).text().not_null())
                    .col(ColumnDef::new(WorkItems::State).string_len(16).not_null())
                    .col(ColumnDef::new(WorkItems::Attempts).integer().not_null())
                    .col(ColumnDef::new(WorkItems::MaxAttempts).integer().not_null())
                    .col(utc(WorkItems::RunAfter))
                    .col(ColumnDef::new(WorkItems::EverySeconds).big_integer().null())
                    .col(ColumnDef::new(WorkItems::LeaseOwner).string_len(128).null())
                    .col(
                        ColumnDef::new(WorkItems::LeaseUntil)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(ColumnDef::new(WorkItems::LastError).text().null())
                    .col(ColumnDef::new(WorkItems::LastNote).text().null())
                    .col(
                        ColumnDef::new(WorkItems::LastRunAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(WorkItems::DedupeKey)
                            .string_len(160)
                            .null()
                            .unique_key(),
                    )
                    .col(utc(WorkItems::CreatedAt))
                    .col(utc(WorkItems::UpdatedAt))
                    .col(
                        ColumnDef::new(WorkItems::FinishedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        // What a worker asks for: the due items of its lane, oldest first.
        manager
            .create_index(
                Index::create()
                    .name("idx_work_items_lane_state_run_after")
                    .table(WorkItems::Table)
                    .col(WorkItems::Lane)
                    .col(WorkItems::State)
                    .col(WorkItems::RunAfter)
                    .to_owned(),
            )
            .await?;
        // Pruning finished items and the ops view's recent list.
        manager
            .create_index(
                Index::create()
                    .name("idx_work_items_state_finished_at")
                    .table(WorkItems::Table)
                    .col(WorkItems::State)
                    .col(WorkItems::FinishedAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Alerts::Table)
                    .col(id(Alerts::Id).primary_key())
                    .col(ColumnDef::new(Alerts::Kind).string_len(64).not_null())
                    .col(ColumnDef::new(Alerts::Subject).string_len(64).null())
                    .col(ColumnDef::new(Alerts::Message).text().not_null())
                    .col(
                        ColumnDef::new(Alerts::DedupeKey)
                            .string_len(160)
                            .null()
                            .unique_key(),
                    )
                    .col(utc(Alerts::RaisedAt))
                    .col(utc(Alerts::LastRaisedAt))
                    .col(ColumnDef::new(Alerts::Repeats).integer().not_null())
                    .col(
                        ColumnDef::new(Alerts::AcknowledgedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(Alerts::AcknowledgedBy)
                            .string_len(128)
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Alerts::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(WorkItems::Table).to_owned())
            .await
    }
}
