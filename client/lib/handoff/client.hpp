// handoff's C++ client library: everything a harness or script needs to talk to handoffd.
//
//   namespace hc = handoff::client;
//   hc::connection c;                      // $HANDOFF_SOCKET, else the default socket
//   c.initialize();
//   handoff::rpc::completed_params done;
//   done.parent_id = "session-42";
//   done.child_id = "refactor";
//   done.status = "done";
//   done.final_text = final_text;          // any length; durable once completed() returns
//   c.completed(done);
//   handoff::rpc::wait_params wait;
//   wait.parent_id = "session-42";
//   wait.child_ids = {"refactor"};
//   std::cout << c.wait(wait).batch.text;  // what the parent model should read
//
// connection.hpp: calls, and the daemon's requests; parent_endpoint.hpp: acting as a parent's
// endpoint (usage answers, auto-deliveries); client_error.hpp: what can go wrong.
#pragma once

#include "handoff/client_error.hpp"     // IWYU pragma: export
#include "handoff/connection.hpp"       // IWYU pragma: export
#include "handoff/parent_endpoint.hpp"  // IWYU pragma: export
