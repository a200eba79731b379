#include "protocol/framing.hpp"
