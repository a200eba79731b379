#include "protocol/messages.hpp"
