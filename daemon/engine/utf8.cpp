#include "engine/utf8.hpp"
