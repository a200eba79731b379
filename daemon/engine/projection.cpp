#include "engine/projection.hpp"
