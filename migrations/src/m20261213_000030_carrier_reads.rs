//! `conversations.carrier_read_until`: set while a carrier's tracking page
//! is being read (or waits for the browser) for the conversation, until the
//! read's time limit, so every replica's pages can say so instead of only
//! "working on a reply" for up to two and a half minutes.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261213_000030_carrier_reads"
    }
}

#[derive(DeriveIden)]
enum Conversations {
    Table,
    CarrierReadUntil,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .add_column(
                        ColumnDef::new(Conversations::CarrierReadUntil)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .drop_column(Conversations::CarrierReadUntil)
                    .to_owned(),
            )
            .await
    }
}
