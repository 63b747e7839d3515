//! A set of agents and the root that receives every new conversation,
//! checked as a whole when it is built: a typo in a handoff target is a
//! startup error, not a surprise in production.

use std::collections::HashMap;

use crate::agent::Agent;

/// Validated agents plus the root agent's name.
#[derive(Debug, Clone)]
pub struct Workflow {
    agents: Vec<Agent>,
    index: HashMap<String, usize>,
    root: String,
}

impl Workflow {
    /// Build a workflow from `agents` with `root` as the entry point.
    ///
    /// # Errors
    ///
    /// [`WorkflowError`] when there are no agents, two agents share a name,
    /// `root` is not one of them, or an agent lists a handoff target that is
    /// not in the workflow.
    pub fn new(agents: Vec<Agent>, root: impl Into<String>) -> Result<Self, WorkflowError> {
        let root = root.into();
        if agents.is_empty() {
            return Err(WorkflowError::Empty);
        }
        let mut index = HashMap::with_capacity(agents.len());
        for (position, agent) in agents.iter().enumerate() {
            if index.insert(agent.name().to_owned(), position).is_some() {
                return Err(WorkflowError::DuplicateAgent {
                    name: agent.name().to_owned(),
                });
            }
        }
        if !index.contains_key(&root) {
            return Err(WorkflowError::UnknownRoot { root });
        }
        for agent in &agents {
            if let Some(target) = agent
                .can_handoff_to()
                .iter()
                .find(|target| !index.contains_key(target.as_str()))
            {
                return Err(WorkflowError::UnknownHandoffTarget {
                    agent: agent.name().to_owned(),
                    target: target.clone(),
                });
            }
        }
        Ok(Self {
            agents,
            index,
            root,
        })
    }

    /// The agent called `name`.
    #[must_use]
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.index.get(name).map(|&position| &self.agents[position])
    }

    /// The root agent, which starts every conversation.
    #[must_use]
    pub fn root(&self) -> &Agent {
        // `new` guarantees the root is indexed; fall back to the first agent
        // rather than panic (there is always one).
        self.agent(&self.root).unwrap_or(&self.agents[0])
    }

    /// All agents, in definition order.
    #[must_use]
    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }
}

/// Why a workflow definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkflowError {
    #[error("a workflow needs at least one agent")]
    Empty,
    #[error("two agents are called {name:?}")]
    DuplicateAgent { name: String },
    #[error("the root agent {root:?} is not in the workflow")]
    UnknownRoot { root: String },
    #[error("agent {agent:?} may hand off to {target:?}, which is not in the workflow")]
    UnknownHandoffTarget { agent: String, target: String },
}
