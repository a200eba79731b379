#include "engine/pending_queue.hpp"
