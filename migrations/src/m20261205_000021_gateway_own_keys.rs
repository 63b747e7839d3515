//! This group's own signing key, in versions: each private half sealed
//! under the master key (which is never stored here), with the time it was
//! made and, once a newer version replaced it, retired.

use crate::utc;
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_000021_gateway_own_keys"
    }
}

#[derive(DeriveIden)]
enum GatewayOwnKeys {
    Table,
    GroupName,
    KeyId,
    Version,
    /// Ed25519, base64url without padding.
    PublicKey,
    /// ChaCha20-Poly1305 nonce, base64url.
    SealNonce,
    /// The sealed private key (seed and tag), base64url.
    Sealed,
    CreatedAt,
    RetiredAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GatewayOwnKeys::Table)
                    .col(
                        ColumnDef::new(GatewayOwnKeys::GroupName)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayOwnKeys::KeyId)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(ColumnDef::new(GatewayOwnKeys::Version).integer().not_null())
                    .col(
                        ColumnDef::new(GatewayOwnKeys::PublicKey)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayOwnKeys::SealNonce)
                            .string_len(32)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayOwnKeys::Sealed)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(utc(GatewayOwnKeys::CreatedAt))
                    .col(
                        ColumnDef::new(GatewayOwnKeys::RetiredAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .primary_key(
                        Index::create()
                            .col(GatewayOwnKeys::GroupName)
                            .col(GatewayOwnKeys::KeyId)
                            .col(GatewayOwnKeys::Version),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(GatewayOwnKeys::Table).to_owned())
            .await
    }
}
