//! The message a running turn is answering, kept with its claim: a page
//! reloaded while the reply is being written shows what the customer said
//! (the transcript itself is saved whole when the turn ends).

use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000008_conversation_pending_message"
    }
}

#[derive(DeriveIden)]
enum Conversations {
    Table,
    PendingMessage,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .add_column(ColumnDef::new(Conversations::PendingMessage).text().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Conversations::Table)
                    .drop_column(Conversations::PendingMessage)
                    .to_owned(),
            )
            .await
    }
}
