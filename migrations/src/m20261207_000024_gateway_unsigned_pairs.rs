//! Pairs an admin allowed without envelope signatures: a plain A2A peer
//! (one that knows nothing of Countersign's signed tasks) can be worked
//! with, and what comes from it is marked unsigned wherever it shows.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261207_000024_gateway_unsigned_pairs"
    }
}

#[derive(DeriveIden)]
enum GatewayUnsignedPairs {
    Table,
    FromGroup,
    ToGroup,
    Kind,
    AllowedBy,
    AllowedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GatewayUnsignedPairs::Table)
                    .col(
                        ColumnDef::new(GatewayUnsignedPairs::FromGroup)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayUnsignedPairs::ToGroup)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayUnsignedPairs::Kind)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(id(GatewayUnsignedPairs::AllowedBy))
                    .col(utc(GatewayUnsignedPairs::AllowedAt))
                    .primary_key(
                        Index::create()
                            .col(GatewayUnsignedPairs::FromGroup)
                            .col(GatewayUnsignedPairs::ToGroup)
                            .col(GatewayUnsignedPairs::Kind),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(GatewayUnsignedPairs::Table).to_owned())
            .await
    }
}
