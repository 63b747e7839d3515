//! A visitor's conversation and their sign-in: a turn that needs the
//! customer's orders waits for the visitor to sign in, and signing in binds
//! every conversation the visitor opened to the person they signed in as.

use super::STOP_POLL;
use super::turn::announced;
use crate::assistant::Chat;
use crate::assistant::tools::request_sign_in::SignIn;
use crate::core::Actor;
use domain::{Role, Timestamp};
use storage::StorageError;

impl Chat {
    /// The visitor `guest_id` signed in as `person`: the conversations they
    /// opened become `person`'s (owner and customer), and a turn waiting in
    /// one of them goes on as `person`. Only a customer takes them over:
    /// staff signing in on a visitor's browser leave them as they are.
    /// Returns the ids of the conversations bound.
    ///
    /// # Errors
    /// Storage failures; nothing is bound then.
    pub async fn visitor_signed_in(
        &self,
        guest_id: &str,
        person: &Actor,
    ) -> Result<Vec<String>, StorageError> {
        if !person.roles.contains(Role::Customer) || person.widget_session.is_some() {
            return Ok(Vec::new());
        }
        let tx = self.db.begin_write().await?;
        let bound =
            storage::conversations::bind_guest(&*tx, guest_id, &person.user_id, self.now()).await?;
        tx.commit().await?;
        for id in &bound {
            tracing::info!(conversation.id = %id, customer.id = %person.user_id, "the visitor signed in; the conversation is theirs");
            if let Some(stored) = storage::conversations::get(self.db.conn(), id).await? {
                self.announce(&stored);
            }
        }
        Ok(bound)
    }

    /// Waits until the visitor holding conversation `id` signs in or
    /// `until` passes (see [`crate::assistant::tools::ToolPort::await_sign_in`]).
    /// Signing in is announced, on PostgreSQL across replicas; the row is
    /// also read every [`STOP_POLL`] in case an announcement is lost, and
    /// no connection is held between reads.
    pub(crate) async fn await_visitor_sign_in(
        &self,
        id: &str,
        until: Timestamp,
    ) -> Result<SignIn, StorageError> {
        let mut changes = self.live.subscribe();
        let mut marked = false;
        loop {
            let Some(stored) = storage::conversations::get(self.db.conn(), id).await? else {
                return Err(StorageError::NotFound {
                    entity: "conversation",
                });
            };
            if let Some(customer) = stored.customer() {
                return match storage::users::find_by_id(self.db.conn(), customer).await? {
                    Some(user) if !user.disabled => Ok(SignIn::SignedIn(Actor::from(user))),
                    _ => Err(StorageError::NotFound { entity: "user" }),
                };
            }
            let now = self.now();
            if now >= until {
                self.mark_sign_in_wait(&stored, None).await?;
                return Ok(SignIn::TimedOut);
            }
            if !marked {
                self.mark_sign_in_wait(&stored, Some(until)).await?;
                marked = true;
            }
            tokio::select! {
                () = tokio::time::sleep(STOP_POLL) => {}
                () = announced(&mut changes, id) => {}
            }
        }
    }

    /// Sets (or clears) the wait on the row of the turn holding it, and
    /// tells the conversation's pages.
    async fn mark_sign_in_wait(
        &self,
        stored: &storage::conversations::StoredConversation,
        until: Option<Timestamp>,
    ) -> Result<(), StorageError> {
        let Some(turn_id) = stored.turn_id.as_deref() else {
            return Ok(());
        };
        let tx = self.db.begin_write().await?;
        let held =
            storage::conversations::set_sign_in_wait(&*tx, &stored.id, turn_id, until).await?;
        tx.commit().await?;
        if held {
            self.announce(stored);
        }
        Ok(())
    }
}
