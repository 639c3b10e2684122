import os
os._exit(1)
