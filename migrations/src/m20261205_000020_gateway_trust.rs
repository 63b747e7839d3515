//! What a group trusts: the peers' public keys an admin pinned (each version
//! with the time it may be used in) and the allowlist of (from group, to
//! group, task kind). Anything not listed is refused.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_000020_gateway_trust"
    }
}

#[derive(DeriveIden)]
enum GatewayPinnedKeys {
    Table,
    GroupName,
    KeyId,
    Version,
    /// Ed25519, base64url without padding.
    PublicKey,
    ValidFrom,
    /// Retirement plus the rotation overlap; null while current.
    UsableUntil,
    PinnedBy,
    PinnedAt,
}

#[derive(DeriveIden)]
enum GatewayPairs {
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
                    .table(GatewayPinnedKeys::Table)
                    .col(
                        ColumnDef::new(GatewayPinnedKeys::GroupName)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayPinnedKeys::KeyId)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayPinnedKeys::Version)
                            .integer()
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayPinnedKeys::PublicKey)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(utc(GatewayPinnedKeys::ValidFrom))
                    .col(
                        ColumnDef::new(GatewayPinnedKeys::UsableUntil)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(id(GatewayPinnedKeys::PinnedBy))
                    .col(utc(GatewayPinnedKeys::PinnedAt))
                    .primary_key(
                        Index::create()
                            .col(GatewayPinnedKeys::GroupName)
                            .col(GatewayPinnedKeys::KeyId)
                            .col(GatewayPinnedKeys::Version),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(GatewayPairs::Table)
                    .col(
                        ColumnDef::new(GatewayPairs::FromGroup)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayPairs::ToGroup)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(ColumnDef::new(GatewayPairs::Kind).string_len(64).not_null())
                    .col(id(GatewayPairs::AllowedBy))
                    .col(utc(GatewayPairs::AllowedAt))
                    .primary_key(
                        Index::create()
                            .col(GatewayPairs::FromGroup)
                            .col(GatewayPairs::ToGroup)
                            .col(GatewayPairs::Kind),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(GatewayPairs::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(GatewayPinnedKeys::Table).to_owned())
            .await
    }
}
