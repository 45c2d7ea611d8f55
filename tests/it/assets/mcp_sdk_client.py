"""Drives `board mcp` with the real MCP Python SDK, as an agent's MCP host would.

Usage: python mcp_sdk_client.py BOARD_BINARY REPORT_FILE

The server is started by the SDK's own stdio client, so it gets the SDK's cleaned environment
(HOME, PATH and a few more; no BOARD_* variables). The script claims and finishes the best ready
task, provokes errors the SDK can receive, and writes what it saw as JSON to REPORT_FILE.
"""

import json
import sys

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client


def dump(result):
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main(board, report_file):
    report = {"errors": []}
    params = StdioServerParameters(command=board, args=["mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=20) as session:
            init = await session.initialize()
            report["server"] = init.server_info.name
            report["tools"] = [dump(t) for t in (await session.list_tools()).tools]
            claim = dump(await session.call_tool("board_claim", {}))
            report["claim"] = claim
            generation = claim.get("structuredContent", {}).get("generation")
            report["check"] = dump(await session.call_tool("board_check", {}))
            report["wait"] = dump(await session.call_tool("board_wait", {"question": "which db?"}))
            report["resume"] = dump(await session.call_tool("board_resume", {}))
            report["renew"] = dump(await session.call_tool("board_renew", {}))
            report["done"] = dump(
                await session.call_tool(
                    "board_done",
                    {"task": claim.get("structuredContent", {}).get("task", {}).get("id"),
                     "generation": generation, "note": "done through the SDK"},
                )
            )
            report["bad_argument"] = dump(await session.call_tool("board_show", {"task": "one"}))
            report["unknown_argument"] = dump(
                await session.call_tool("board_show", {"task": 1, "tsk": 2})
            )
            for name, call in [
                ("unknown tool", lambda: session.call_tool("board_nosuch", {})),
                ("claim nothing ready", lambda: session.call_tool("board_claim", {})),
            ]:
                try:
                    r = await call()
                    report["errors"].append({"name": name, "result": dump(r)})
                except MCPError as e:
                    report["errors"].append(
                        {"name": name, "code": e.error.code, "message": e.error.message}
                    )
    with open(report_file, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
