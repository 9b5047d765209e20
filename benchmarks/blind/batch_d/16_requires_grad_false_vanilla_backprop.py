"""Vanilla-backprop saliency on a user's own CNN and data: a hook on the first
conv records grad_in[0] (the gradient w.r.t. the image). The image tensor is
built from the user's array without requires_grad=True (the repo's own
preprocess_image sets it), so the hook gets None and image.grad is None
(utkuozbulak/pytorch-cnn-visualizations#43).
"""
import numpy as np
import torch
import torch.nn as nn

CAUSE = "requires_grad_false"
CUT_LINE_MARK = "# <-- CUT"
QUERY = "processed_image"
EXPECT = "grad_none"


class VanillaBackprop:
    def __init__(self, model):
        self.model = model
        self.gradients = None
        self.model.eval()
        self.hook_layers()

    def hook_layers(self):
        def hook_function(module, grad_in, grad_out):
            self.gradients = grad_in[0]
        first_layer = list(self.model.features._modules.items())[0][1]
        first_layer.register_full_backward_hook(hook_function)

    def generate_gradients(self, input_image, target_class):
        model_output = self.model(input_image)
        self.model.zero_grad()
        one_hot_output = torch.zeros_like(model_output)
        one_hot_output[0][target_class] = 1
        model_output.backward(gradient=one_hot_output)
        return self.gradients


class MyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(4 * 8 * 8, 3)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def run():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = MyCNN()
    scan = rng.random((16, 16)).astype(np.float32)
    scan = (scan - scan.mean()) / scan.std()
    processed_image = torch.from_numpy(scan)[None, None]  # <-- CUT
    vbp = VanillaBackprop(model)
    vanilla_grads = vbp.generate_gradients(processed_image, target_class=1)
    return {"model": model, "processed_image": processed_image, "vanilla_grads": vanilla_grads}
