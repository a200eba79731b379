#include "engine/budget.hpp"
