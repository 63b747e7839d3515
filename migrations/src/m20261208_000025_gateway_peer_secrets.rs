//! Secrets an admin issues to a plain A2A peer (one that cannot sign
//! Countersign's task envelopes): the peer sends one as its bearer token and
//! is known by it as its group. Only a digest is kept; revoked, it stops
//! working at once.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261208_000025_gateway_peer_secrets"
    }
}

#[derive(DeriveIden)]
enum GatewayPeerSecrets {
    Table,
    Id,
    GroupName,
    SecretDigest,
    IssuedBy,
    IssuedAt,
    RevokedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GatewayPeerSecrets::Table)
                    .col(id(GatewayPeerSecrets::Id).primary_key())
                    .col(
                        ColumnDef::new(GatewayPeerSecrets::GroupName)
                            .string_len(63)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(GatewayPeerSecrets::SecretDigest)
                            .string_len(64)
                            .not_null()
                            .unique_key(),
                    )
                    .col(id(GatewayPeerSecrets::IssuedBy))
                    .col(utc(GatewayPeerSecrets::IssuedAt))
                    .col(
                        ColumnDef::new(GatewayPeerSecrets::RevokedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(GatewayPeerSecrets::Table).to_owned())
            .await
    }
}
