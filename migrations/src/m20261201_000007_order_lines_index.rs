//! Order lines are read by order (every order lookup, every approval), and
//! the commerce step gave them no index on `order_id`: each read scanned
//! the whole table, so lookups slowed as orders accumulated.

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000007_order_lines_index"
    }
}

#[derive(DeriveIden)]
enum OrderLines {
    Table,
    OrderId,
}

const INDEX: &str = "idx_order_lines_order";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(OrderLines::Table)
                    .col(OrderLines::OrderId)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(INDEX)
                    .table(OrderLines::Table)
                    .to_owned(),
            )
            .await
    }
}
