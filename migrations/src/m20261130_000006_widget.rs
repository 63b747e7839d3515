//! The embeddable chat widget: registered host sites (one origin each), their
//! signing keys (only the public half is stored), and the widget sessions
//! opened with a host site's signed customer token.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000006_widget"
    }
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum WidgetSites {
    Table,
    Id,
    Name,
    /// `scheme://host[:port]`, the only page origin allowed to frame the widget.
    Origin,
    CreatedBy,
    CreatedAt,
    /// A disabled site's tokens and sessions are refused.
    DisabledAt,
}

#[derive(DeriveIden)]
enum WidgetKeys {
    Table,
    /// The `kid` the host puts in its token header.
    Id,
    SiteId,
    /// The Ed25519 public key, base64url without padding (JWK `x`).
    PublicKey,
    CreatedBy,
    CreatedAt,
    RevokedAt,
}

#[derive(DeriveIden)]
enum WidgetSessions {
    Table,
    Id,
    /// SHA-256 of the session secret handed to the widget frame.
    SecretHash,
    SiteId,
    KeyId,
    CustomerId,
    /// The host token's `jti`: each token opens at most one session.
    TokenId,
    CreatedAt,
    ExpiresAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(WidgetSites::Table)
                    .col(id(WidgetSites::Id).primary_key())
                    .col(ColumnDef::new(WidgetSites::Name).string_len(200).not_null())
                    .col(
                        ColumnDef::new(WidgetSites::Origin)
                            .string_len(300)
                            .not_null()
                            .unique_key(),
                    )
                    .col(id(WidgetSites::CreatedBy))
                    .col(utc(WidgetSites::CreatedAt))
                    .col(
                        ColumnDef::new(WidgetSites::DisabledAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetSites::Table, WidgetSites::CreatedBy)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WidgetKeys::Table)
                    .col(id(WidgetKeys::Id).primary_key())
                    .col(id(WidgetKeys::SiteId))
                    .col(
                        ColumnDef::new(WidgetKeys::PublicKey)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(id(WidgetKeys::CreatedBy))
                    .col(utc(WidgetKeys::CreatedAt))
                    .col(
                        ColumnDef::new(WidgetKeys::RevokedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetKeys::Table, WidgetKeys::SiteId)
                            .to(WidgetSites::Table, WidgetSites::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetKeys::Table, WidgetKeys::CreatedBy)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_widget_keys_site")
                    .table(WidgetKeys::Table)
                    .col(WidgetKeys::SiteId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WidgetSessions::Table)
                    .col(id(WidgetSessions::Id).primary_key())
                    .col(
                        ColumnDef::new(WidgetSessions::SecretHash)
                            .string_len(64)
                            .not_null()
                            .unique_key(),
                    )
                    .col(id(WidgetSessions::SiteId))
                    .col(id(WidgetSessions::KeyId))
                    .col(id(WidgetSessions::CustomerId))
                    .col(
                        ColumnDef::new(WidgetSessions::TokenId)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(utc(WidgetSessions::CreatedAt))
                    .col(utc(WidgetSessions::ExpiresAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetSessions::Table, WidgetSessions::SiteId)
                            .to(WidgetSites::Table, WidgetSites::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetSessions::Table, WidgetSessions::KeyId)
                            .to(WidgetKeys::Table, WidgetKeys::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetSessions::Table, WidgetSessions::CustomerId)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await?;
        // A replayed token (same site, same jti) cannot open a second session,
        // even when two replicas race to accept it.
        manager
            .create_index(
                Index::create()
                    .name("idx_widget_sessions_token")
                    .table(WidgetSessions::Table)
                    .col(WidgetSessions::SiteId)
                    .col(WidgetSessions::TokenId)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_widget_sessions_expiry")
                    .table(WidgetSessions::Table)
                    .col(WidgetSessions::ExpiresAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            WidgetSessions::Table.into_iden(),
            WidgetKeys::Table.into_iden(),
            WidgetSites::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
