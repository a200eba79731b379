#include "protocol/jsonrpc.hpp"
