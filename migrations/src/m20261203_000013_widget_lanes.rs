//! The widget stays in its lane: each conversation remembers the widget
//! session that opened it (a widget session reaches only those and the
//! proposals they prepared), and each widget site lists the customers it may
//! sign in (a site signs in nobody until an admin binds customers to it).

use crate::{id, utc};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261203_000013_widget_lanes"
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
}

#[derive(DeriveIden)]
enum Conversations {
    Table,
    /// The widget session that opened the conversation; none for the web app
    /// and the API. No foreign key: expired sessions are deleted, and the
    /// conversation (the customer's record) outlives them.
    WidgetSessionId,
}

#[derive(DeriveIden)]
enum WidgetSiteCustomers {
    Table,
    SiteId,
    CustomerId,
    BoundBy,
    BoundAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .add_column(
                        ColumnDef::new(Conversations::WidgetSessionId)
                            .string_len(64)
                            .null(),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_conversations_widget_session")
                    .table(Conversations::Table)
                    .col(Conversations::WidgetSessionId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WidgetSiteCustomers::Table)
                    .col(id(WidgetSiteCustomers::SiteId))
                    .col(id(WidgetSiteCustomers::CustomerId))
                    .col(id(WidgetSiteCustomers::BoundBy))
                    .col(utc(WidgetSiteCustomers::BoundAt))
                    .primary_key(
                        Index::create()
                            .col(WidgetSiteCustomers::SiteId)
                            .col(WidgetSiteCustomers::CustomerId),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetSiteCustomers::Table, WidgetSiteCustomers::SiteId)
                            .to(WidgetSites::Table, WidgetSites::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetSiteCustomers::Table, WidgetSiteCustomers::CustomerId)
                            .to(Users::Table, Users::Id),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(WidgetSiteCustomers::Table, WidgetSiteCustomers::BoundBy)
                            .to(Users::Table, Users::Id),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(WidgetSiteCustomers::Table).to_owned())
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_conversations_widget_session")
                    .table(Conversations::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .drop_column(Conversations::WidgetSessionId)
                    .to_owned(),
            )
            .await
    }
}
