//! Two ways to end a running turn, and a Stop that reaches background work:
//! `preempt_only` says the end requested of the running turn is a preempt
//! (a `now` message takes its place; what the turn started in the
//! background runs on), not a Stop; `stopped_at` is when Stop was last
//! pressed, so background work of the conversation that started before it
//! stops on whichever replica runs it, with or without a turn running;
//! `background_until` is the lease of such background work (renewed while
//! it runs), so a Stop taken by another replica can say it reached it.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261210_000027_conversation_stop_kinds"
    }
}

#[derive(DeriveIden)]
enum Conversations {
    Table,
    PreemptOnly,
    StoppedAt,
    BackgroundUntil,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite adds one at a time.
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .add_column(
                        ColumnDef::new(Conversations::PreemptOnly)
                            .boolean()
                            .not_null()
                            .default(false),
                    )
                    .to_owned(),
            )
            .await?;
        for column in [Conversations::StoppedAt, Conversations::BackgroundUntil] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Conversations::Table)
                        .add_column(ColumnDef::new(column).timestamp_with_time_zone().null())
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            Conversations::BackgroundUntil,
            Conversations::StoppedAt,
            Conversations::PreemptOnly,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Conversations::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
