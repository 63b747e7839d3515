//! Proposals (immutable content + current state), approvals, receipts and
//! approval limits.

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000003_proposals"
    }
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum Proposals {
    Table,
    Id,
    Kind,
    OrderId,
    AmountMinor,
    Currency,
    ActionDigest,
    Content,
    Status,
    State,
    StateVersion,
    RequestedBy,
    OnBehalfOf,
    ConversationId,
    Supersedes,
    CreatedAt,
    ExpiresAt,
    UpdatedAt,
    /// When a claimed execution may be taken over (executing) or the next
    /// status check is due (outcome unknown); indexed for the reconciler.
    DueAt,
}

#[derive(DeriveIden)]
enum Approvals {
    Table,
    Id,
    ProposalId,
    ApproverId,
    Decision,
    Reason,
    ActionDigestShown,
    Conditions,
    DecidedAt,
    ExpiresAt,
}

#[derive(DeriveIden)]
enum Receipts {
    Table,
    ProposalId,
    Provider,
    ProviderRefundId,
    AmountMinor,
    Currency,
    Status,
    Raw,
    RecordedAt,
}

#[derive(DeriveIden)]
enum ApprovalLimits {
    Table,
    UserId,
    Currency,
    LimitMinor,
}

#[derive(DeriveIden)]
enum FourEyesThresholds {
    Table,
    Currency,
    ThresholdMinor,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Proposals::Table)
                    .col(id(Proposals::Id).primary_key())
                    .col(ColumnDef::new(Proposals::Kind).string_len(32).not_null())
                    .col(id(Proposals::OrderId))
                    .col(
                        ColumnDef::new(Proposals::AmountMinor)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(Proposals::Currency).string_len(3).not_null())
                    .col(
                        ColumnDef::new(Proposals::ActionDigest)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(ColumnDef::new(Proposals::Content).text().not_null())
                    .col(ColumnDef::new(Proposals::Status).string_len(32).not_null())
                    .col(ColumnDef::new(Proposals::State).text().not_null())
                    .col(
                        ColumnDef::new(Proposals::StateVersion)
                            .big_integer()
                            .not_null(),
                    )
                    .col(id(Proposals::RequestedBy))
                    .col(ColumnDef::new(Proposals::OnBehalfOf).string_len(64).null())
                    .col(
                        ColumnDef::new(Proposals::ConversationId)
                            .string_len(64)
                            .null(),
                    )
                    .col(ColumnDef::new(Proposals::Supersedes).string_len(64).null())
                    .col(utc(Proposals::CreatedAt))
                    .col(utc(Proposals::ExpiresAt))
                    .col(utc(Proposals::UpdatedAt))
                    .col(
                        ColumnDef::new(Proposals::DueAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            (
                "idx_proposals_status_expiry",
                vec![Proposals::Status, Proposals::ExpiresAt],
            ),
            (
                "idx_proposals_status_due",
                vec![Proposals::Status, Proposals::DueAt],
            ),
            ("idx_proposals_order", vec![Proposals::OrderId]),
        ] {
            let mut index = Index::create()
                .name(name)
                .table(Proposals::Table)
                .to_owned();
            for column in columns {
                index.col(column);
            }
            manager.create_index(index).await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(Approvals::Table)
                    .col(id(Approvals::Id).primary_key())
                    .col(id(Approvals::ProposalId))
                    .col(id(Approvals::ApproverId))
                    .col(
                        ColumnDef::new(Approvals::Decision)
                            .string_len(16)
                            .not_null(),
                    )
                    .col(ColumnDef::new(Approvals::Reason).text().null())
                    .col(
                        ColumnDef::new(Approvals::ActionDigestShown)
                            .string_len(64)
                            .not_null(),
                    )
                    .col(ColumnDef::new(Approvals::Conditions).text().not_null())
                    .col(utc(Approvals::DecidedAt))
                    .col(utc(Approvals::ExpiresAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Approvals::Table, Approvals::ProposalId)
                            .to(Proposals::Table, Proposals::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(Approvals::Table, Approvals::ApproverId)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await?;
        // A person may approve again after their own approval expired, so
        // (proposal, approver) is not unique; double clicks are stopped by the
        // conditional state update instead.
        manager
            .create_index(
                Index::create()
                    .name("idx_approvals_proposal")
                    .table(Approvals::Table)
                    .col(Approvals::ProposalId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Receipts::Table)
                    .col(id(Receipts::ProposalId).primary_key())
                    .col(ColumnDef::new(Receipts::Provider).string_len(32).not_null())
                    .col(
                        ColumnDef::new(Receipts::ProviderRefundId)
                            .string_len(128)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(Receipts::AmountMinor)
                            .big_integer()
                            .not_null(),
                    )
                    .col(ColumnDef::new(Receipts::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(Receipts::Status).string_len(32).not_null())
                    .col(ColumnDef::new(Receipts::Raw).text().not_null())
                    .col(utc(Receipts::RecordedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Receipts::Table, Receipts::ProposalId)
                            .to(Proposals::Table, Proposals::Id),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ApprovalLimits::Table)
                    .col(id(ApprovalLimits::UserId))
                    .col(
                        ColumnDef::new(ApprovalLimits::Currency)
                            .string_len(3)
                            .not_null(),
                    )
                    .col(
                        ColumnDef::new(ApprovalLimits::LimitMinor)
                            .big_integer()
                            .not_null(),
                    )
                    .primary_key(
                        Index::create()
                            .col(ApprovalLimits::UserId)
                            .col(ApprovalLimits::Currency),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(ApprovalLimits::Table, ApprovalLimits::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(FourEyesThresholds::Table)
                    .col(
                        ColumnDef::new(FourEyesThresholds::Currency)
                            .string_len(3)
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(FourEyesThresholds::ThresholdMinor)
                            .big_integer()
                            .not_null(),
                    )
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            FourEyesThresholds::Table.into_iden(),
            ApprovalLimits::Table.into_iden(),
            Receipts::Table.into_iden(),
            Approvals::Table.into_iden(),
            Proposals::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
