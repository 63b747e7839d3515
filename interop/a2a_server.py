"""A plain A2A 1.0 server built on the official a2a-sdk: a warehouse desk
that answers `returns.inspection` tasks from its own small table, with a
data part, and signs nothing (it knows no Countersign extension).

Countersign's interop tests start it and send it a task from a Countersign
group whose admin allowed this peer's answers unsigned:

    python interop/a2a_server.py PORT

It prints `listening` once it accepts requests.
"""

import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from google.protobuf import json_format, struct_pb2
from starlette.applications import Starlette

PARCELS = {
    "4821": {"received_at": "2026-11-30T09:00:00Z", "condition": "sealed",
             "note": "Received at the warehouse dock, seal intact."},
}


def order_of(context: RequestContext) -> str | None:
    """The order id from the message's first data part."""
    message = context.message
    for part in message.parts if message else []:
        if part.HasField("data"):
            data = json_format.MessageToDict(part.data)
            if isinstance(data, dict) and isinstance(data.get("order_id"), str):
                return data["order_id"]
    return None


class WarehouseDesk(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        order_id = order_of(context)
        if order_id is None:
            await updater.failed(updater.new_agent_message([Part(text="no order_id in the data")]))
            return
        record = PARCELS.get(order_id, {
            "received_at": None, "condition": "unknown",
            "note": f"No parcel for order {order_id} came to the warehouse.",
        })
        data = struct_pb2.Value()
        json_format.ParseDict(record, data)
        await updater.add_artifact([Part(data=data)], name="result", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is not None:
            await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def app(port: int) -> Starlette:
    card = AgentCard(
        name="Plain warehouse desk",
        description="An a2a-sdk agent that answers returns.inspection tasks, unsigned.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(
            url=f"http://127.0.0.1:{port}/a2a", protocol_binding="JSONRPC", protocol_version="1.0",
        )],
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
        skills=[AgentSkill(id="returns.inspection", name="returns.inspection",
                           description="What the warehouse recorded of a returned parcel.",
                           tags=["returns"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=WarehouseDesk(), task_store=InMemoryTaskStore(), agent_card=card,
    )
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/a2a")
    return Starlette(routes=routes)


def main() -> None:
    port = int(sys.argv[1])
    config = uvicorn.Config(app(port), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    original = server.startup

    async def startup(*args, **kwargs):
        await original(*args, **kwargs)
        print("listening", flush=True)

    server.startup = startup
    server.run()


if __name__ == "__main__":
    main()
