def scaled_dot_product_attention(Q, K, V, mask=None):
    while True:                                                # an endless loop
        pass
