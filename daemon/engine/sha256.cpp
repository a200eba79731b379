#include "engine/sha256.hpp"
