#include "engine/batch.hpp"
